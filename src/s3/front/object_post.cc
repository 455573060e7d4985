// POST /bucket with a multipart/form-data body: S3's browser-based upload
// (POST Object). The body streams through a FormDataReader; the form's
// fields come first and are decided on before any byte of the file is
// stored:
//   1. the form's signature (post_signature.h: SigV4, SigV2, or none:
//      anonymous) names the principal, and its policy (post_policy.h) must
//      hold for every field;
//   2. the `key` field (with ${filename} replaced by the file's name) is
//      the object's key; the fields S3 reads as headers (Content-Type,
//      acl as x-amz-acl, x-amz-meta-*, ...) become call->form_headers, so
//      the decision, the ACL and the metadata are PutObject's, unchanged;
//   3. admission and the capacity charge are PutObject's, then the access
//      decision (WithAuthorizedBucket, WithObjectWriteAccess).
// The file's bytes then go to a BlobWriter (or stay inline while they fit
// inline_bytes_max: the size is unknown until the closing delimiter). The
// policy's content-length-range maximum and object_bytes_max are checked
// as bytes arrive, its minimum once the file ended; the body is read to its
// end before ONE op commits the object. Any refusal abandons the blobs
// written so far (BlobWriter::Abandon), as a failed PutObject does.
//
// One piece of the body is in flight at a time (read -> parse -> digest ->
// writer), so memory per upload is the writer's window, one piece and the
// fields (FormDataLimits). The chain is sequential: no lock.
#include <optional>
#include <string>
#include <utility>

#include "common/limits.h"
#include "s3/auth/checksum.h"
#include "s3/auth/md5.h"
#include "s3/auth/post_policy.h"
#include "s3/auth/post_signature.h"
#include "s3/auth/request_parts.h"
#include "s3/front/blob_writer.h"
#include "s3/front/object_metadata.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/upload_commit.h"
#include "s3/model/s3_keys.h"
#include "s3/protocol/form_data.h"
#include "s3/protocol/names.h"

namespace tessera::s3::front {
namespace {

constexpr size_t kBodyPieceBytes = 1 << 20;

// The form's signature fields: not headers of the object.
bool IsSignatureField(std::string_view lower_name) {
  return lower_name == "x-amz-algorithm" || lower_name == "x-amz-credential" ||
         lower_name == "x-amz-date" || lower_name == "x-amz-signature" ||
         lower_name == "x-amz-security-token";
}

// The fields S3 reads as the object's headers (the `acl` field is
// x-amz-acl), names lowercase.
http::Headers FormHeadersOf(const auth::PostFields& fields) {
  http::Headers out;
  for (const auto& [name, value] : fields) {
    std::string lower = auth::ToLowerAscii(name);
    if (lower == "acl") lower = "x-amz-acl";
    if (IsSignatureField(lower) || !S3Call::IsFormDefinedHeader(lower)) continue;
    out.emplace_back(std::move(lower), value);
  }
  return out;
}

// The `key` field with every ${filename} replaced by the file's name (S3
// substitutes the name as sent; a browser sends the base name).
std::string SubstituteFilename(std::string key, const std::string& filename) {
  static constexpr std::string_view kVariable = "${filename}";
  for (size_t at = key.find(kVariable); at != std::string::npos;
       at = key.find(kVariable, at + filename.size())) {
    key.replace(at, kVariable.size(), filename);
  }
  return key;
}

// A success_action_redirect S3 follows: an absolute http(s) URL with a
// host; anything else is ignored, as S3 ignores it.
bool IsRedirectUrl(std::string_view url) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (url.starts_with(scheme) && url.size() > scheme.size() && url[scheme.size()] != '/') {
      return url.find_first_of(" \r\n\t\"<>") == std::string_view::npos;
    }
  }
  return false;
}

class PostUpload : public FormDataSink, public std::enable_shared_from_this<PostUpload> {
 public:
  PostUpload(CallPtr call, std::string boundary)
      : call_(std::move(call)), front_(call_->front), reader_(std::move(boundary), *this) {}

  void Start() { ReadNext(); }

  // FormDataSink: fields are kept, the file's bytes of one Feed gathered
  // in chunk_ (at most one piece and a delimiter).
  S3Status OnField(std::string name, std::string value) override {
    fields_.emplace_back(std::move(name), std::move(value));
    return S3Status::Ok();
  }
  S3Status OnFileStart(FormFile file) override {
    file_ = std::move(file);
    return S3Status::Ok();
  }
  S3Status OnFileBytes(std::string_view bytes) override {
    chunk_.append(bytes);
    return S3Status::Ok();
  }
  S3Status OnFileEnd() override { return S3Status::Ok(); }

 private:
  void ReadNext() {
    call_->exchange->ReadBody(kBodyPieceBytes,
                              [self = shared_from_this()](Result<std::string> piece, bool end) {
                                self->OnPiece(std::move(piece), end);
                              });
  }

  void OnPiece(Result<std::string> piece, bool end) {
    if (!piece.ok()) return Abort(BodyReadError(piece.status()));
    if (S3Status fed = reader_.Feed(*piece); !fed.ok()) return Abort(fed.error());
    if (end) {
      if (S3Status finished = reader_.Finish(); !finished.ok()) return Abort(finished.error());
    }
    body_ended_ = end;
    if (!file_) return ReadNext();  // still in the fields (Finish refused a body without file)
    if (!prepared_) return Authenticate();
    HandOn();
  }

  // --- Before the first byte of the file: who, which key, may they. ------

  void Authenticate() {
    auth::AuthConfig config;
    config.region = front_.options().region;
    config.now_unix_s = NowMs() / 1000;
    std::string access_key;
    auto first = auth::AuthenticatePostForm(
        fields_, config, [&access_key](std::string_view ak) -> std::optional<std::string> {
          access_key = std::string(ak);
          return std::nullopt;
        });
    if (first.ok()) return CheckForm();  // anonymous: no signature, no policy
    if (access_key.empty()) return Abort(first.error());
    front_.registry().SecretOf(access_key, [self = shared_from_this(), config,
                                            access_key](Result<router::UserSecret> secret) {
      self->OnSecret(config, access_key, std::move(secret));
    });
  }

  void OnSecret(const auth::AuthConfig& config, const std::string& access_key,
                Result<router::UserSecret> secret) {
    if (!secret.ok()) {
      if (secret.status().code() == StatusCode::kNotFound) {
        return Abort(InvalidAccessKeyIdError(access_key));
      }
      return Abort(FromStatus(secret.status()));
    }
    auto verified = auth::AuthenticatePostForm(
        fields_, config, [&](std::string_view ak) -> std::optional<std::string> {
          if (ak != access_key) return std::nullopt;
          return secret->secret_key;
        });
    if (!verified.ok()) return Abort(verified.error());
    call_->auth = std::move(verified).value();
    call_->user = secret->user;
    call_->principal = authz::Principal{false, secret->user, secret->canonical_id};
    call_->user_display_name = secret->display_name;
    CheckForm();
  }

  // The policy over the fields, the key, the fields as headers; then
  // admission and the access decision as a PutObject.
  void CheckForm() {
    if (const std::string* policy = auth::PostField(fields_, "policy")) {
      auto parsed = auth::ParsePostPolicy(*policy);
      if (!parsed.ok()) return Abort(parsed.error());
      if (S3Status held = auth::CheckPostPolicy(*parsed, fields_, call_->bucket, NowMs());
          !held.ok()) {
        return Abort(held.error());
      }
      policy_ = std::move(parsed).value();
    }
    const std::string* key = auth::PostField(fields_, "key");
    if (key == nullptr) {
      return Abort(InvalidArgumentError(
          "Bucket POST must contain a field named 'key'.  If it is specified, please check the "
          "order of the fields.",
          "key", ""));
    }
    call_->key = SubstituteFilename(*key, file_->filename);
    if (auto valid = ValidateObjectKey(call_->key); !valid.ok()) return Abort(valid.error());
    call_->form_headers = FormHeadersOf(fields_);
    // A field's value may become a response header (metadata, Content-Type):
    // refused as a request header carrying CR, LF or NUL is.
    if (auto clean = CheckFieldCharacters(*call_->form_headers, {}); !clean.ok()) {
      return Abort(clean.error());
    }
    if (!AdmitAsPutObject(*call_)) return Stop();
    WithAuthorizedBucket(call_, authz::Action::kPutObject, [self = shared_from_this()] {
      WithObjectWriteAccess(self->call_, [self](ObjectWriteAccess access) {
        if (S3Status built = self->BuildObject(access); !built.ok()) return self->Abort(built.error());
        self->prepared_ = true;
        self->HandOn();
      });
    });
  }

  // The version's metadata, owner, ACL, tags and the checksums to verify.
  S3Status BuildObject(const ObjectWriteAccess& access) {
    if (S3Status filled = FillObjectMetadata(*call_, &object_); !filled.ok()) return filled;
    object_.set_owner(access.owner);
    if (access.acl) *object_.mutable_acl() = *access.acl;
    if (const std::string* tagging = auth::PostField(fields_, "tagging")) {
      auto tags = ParseTagging(*tagging);
      if (!tags.ok()) return tags.error();
      if (auto valid = ValidateTagSet(*tags, limits::kS3ObjectTagsMax); !valid.ok()) return valid;
      for (Tag& t : *tags) {
        pb::MetadataPair* pair = object_.add_tags();
        pair->set_name(std::move(t.key));
        pair->set_value(std::move(t.value));
      }
    }
    const http::Headers& form = *call_->form_headers;
    auto declared = auth::FindDeclaredChecksum(form);
    if (!declared.ok()) return declared.error();
    if (declared->has_value()) {
      declared_ = **declared;
      checksum_.emplace(declared_->algorithm);
    }
    if (auto md5 = call_->Header("content-md5")) content_md5_ = std::string(*md5);
    return S3Status::Ok();
  }

  // --- The file's bytes. --------------------------------------------------

  // Digests and stores the file bytes of the last piece, then reads on (or
  // finishes after the body's end).
  void HandOn() {
    std::string bytes = std::move(chunk_);
    chunk_.clear();
    size_ += bytes.size();
    if (size_ > front_.options().object_bytes_max) {
      return Abort(S3Error(S3ErrorCode::kEntityTooLarge)
                       .With("ProposedSize", std::to_string(size_))
                       .With("MaxSizeAllowed", std::to_string(front_.options().object_bytes_max)));
    }
    // Past the policy's maximum: refused now rather than stored to the end.
    if (policy_ && policy_->content_length_range && size_ > policy_->content_length_range->second) {
      return Abort(auth::CheckContentLength(*policy_, size_).error());
    }
    md5_.Update(bytes);
    if (checksum_) checksum_->Update(bytes);
    if (!writer_ && inline_data_.size() + bytes.size() <= front_.options().inline_bytes_max) {
      inline_data_.append(bytes);
      return Continue();
    }
    if (!writer_) {
      writer_ = BlobWriter::Create(front_.blobs(), front_.options().blob_bytes,
                                   model::ObjectPrefix(call_->bucket_info.bucket_id(), call_->stored_key()),
                                   /*expected_bytes=*/0);
      bytes.insert(0, inline_data_);
      inline_data_.clear();
    }
    writer_->Write(std::move(bytes), [self = shared_from_this()](Status st) {
      if (!st.ok()) return self->Abort(FromBlobStatus(st));
      self->Continue();
    });
  }

  void Continue() {
    if (body_ended_) return Finish();
    ReadNext();
  }

  void Finish() {
    if (policy_) {
      if (S3Status fits = auth::CheckContentLength(*policy_, size_); !fits.ok()) {
        return Abort(fits.error());
      }
    }
    const std::string md5 = md5_.Finish();
    if (S3Status st = VerifyDeclaredDigests(content_md5_, md5, declared_, checksum_, object_);
        !st.ok()) {
      return Abort(st.error());
    }
    etag_ = auth::HexEncode(md5);
    auto self = shared_from_this();
    FinishBlobs(writer_, std::move(inline_data_), object_, [self] { self->Commit(); },
                [self](const S3Error& error) { self->Abort(error); });
  }

  void Commit() {
    front_.index().Apply(PutObjectOpOf(*call_, object_, size_, etag_),
                         [self = shared_from_this()](Result<pb::S3OpResult> r) {
                           self->OnCommitted(std::move(r));
                         });
  }

  void OnCommitted(Result<pb::S3OpResult> r) {
    // A failed op already queued the blobs for GC (the op's contract).
    if (!CommittedOk(*call_, front_, r, static_cast<size_t>(object_.blobs_size()))) return;
    Answer(r->version_id());
  }

  // 303 to success_action_redirect (or the older `redirect`) when it is a
  // URL, else success_action_status 200 or 201 (PostResponse), else 204.
  void Answer(const std::string& version_id) {
    const std::string etag = QuoteEtag(etag_);
    const std::string host(call_->head().Header("host").value_or("localhost"));
    const std::string location = (call_->head().tls ? "https://" : "http://") + host + "/" +
                                 call_->bucket + "/" + PercentEncode(call_->key, true);
    http::Headers headers = {{"ETag", etag}};
    AddWrittenVersionHeader(call_->bucket_info, version_id, headers);
    const std::string* redirect = auth::PostField(fields_, "success_action_redirect");
    if (redirect == nullptr) redirect = auth::PostField(fields_, "redirect");
    if (redirect != nullptr && IsRedirectUrl(*redirect)) {
      const char separator = redirect->find('?') == std::string::npos ? '?' : '&';
      headers.emplace_back("Location", *redirect + separator +
                                           "bucket=" + PercentEncode(call_->bucket, false) +
                                           "&key=" + PercentEncode(call_->key, false) +
                                           "&etag=" + PercentEncode(etag, false));
      headers.emplace_back("Content-Length", "0");
      return call_->Respond(303, std::move(headers), "");
    }
    headers.emplace_back("Location", location);
    const std::string* status = auth::PostField(fields_, "success_action_status");
    if (status != nullptr && *status == "201") {
      CompleteMultipartUploadResult result{location, call_->bucket, call_->key, etag};
      return call_->RespondXml(201, PostResponseXml(result), std::move(headers));
    }
    const unsigned code = status != nullptr && *status == "200" ? 200 : 204;
    if (code == 200) headers.emplace_back("Content-Length", "0");
    call_->Respond(code, std::move(headers), "");
  }

  // Answers `error` (unless already answered) and frees what was written.
  void Abort(const S3Error& error) {
    Stop();
    if (!call_->answered()) call_->Fail(error);
  }
  void Stop() {
    if (writer_) writer_->Abandon();
    writer_.reset();
    object_.clear_blobs();
  }

  CallPtr call_;
  S3Front& front_;
  FormDataReader reader_;
  auth::PostFields fields_;
  std::optional<FormFile> file_;
  std::string chunk_;  // file bytes of the last piece, not yet handed on
  bool body_ended_ = false;
  bool prepared_ = false;  // authenticated, decided, object_ built
  std::optional<auth::PostPolicy> policy_;
  std::optional<auth::DeclaredChecksum> declared_;
  std::optional<auth::Checksummer> checksum_;
  std::optional<std::string> content_md5_;
  auth::Md5 md5_;
  uint64_t size_ = 0;
  std::shared_ptr<BlobWriter> writer_;  // null: inline so far
  std::string inline_data_;
  std::string etag_;
  pb::ObjectVersion object_;
};

}  // namespace

void PostObject(CallPtr call) {
  const std::string_view content_type = call->head().Header("content-type").value_or("");
  auto boundary = FormDataBoundary(content_type);
  if (!boundary.ok() && auth::StartsWithIgnoreCase(content_type, "multipart/form-data")) {
    return call->Fail(boundary.error());
  }
  if (!boundary.ok()) {
    // S3's answer to a bucket POST that is not a form.
    return call->Fail(S3Error(S3ErrorCode::kPreconditionFailed)
                          .With("Condition", "Bucket POST must be of the enclosure-type "
                                             "multipart/form-data"));
  }
  std::make_shared<PostUpload>(call, std::move(boundary).value())->Start();
}

}  // namespace tessera::s3::front
