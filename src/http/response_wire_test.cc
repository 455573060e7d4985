// Goal: SerializeResponse writes exactly the HTTP/1.x bytes a client expects
// (status line, headers in order, Connection only when the version's default
// differs, Content-Length except for 1xx/204/304, no body on HEAD) and never
// lets a header split the response.
#include "http/response_wire.h"

#include <gtest/gtest.h>

namespace tessera::http {
namespace {

ResponseFraming Framing(unsigned version = 11, bool keep_alive = true, bool head = false) {
  return ResponseFraming{version, keep_alive, head, "tessera"};
}

TEST(ResponseWire, KeepAliveJsonAnswerWithExtraHeadersInOrder) {
  Response response = Response::Json(200, "{\"version\":7}");
  response.headers = {{"ETag", "\"7\""}, {"X-Tessera-Version", "7"}};
  EXPECT_EQ(SerializeResponse(response, Framing()),
            "HTTP/1.1 200 OK\r\n"
            "Server: tessera\r\n"
            "Content-Type: application/json\r\n"
            "ETag: \"7\"\r\n"
            "X-Tessera-Version: 7\r\n"
            "Content-Length: 13\r\n"
            "\r\n"
            "{\"version\":7}");
}

TEST(ResponseWire, ConnectionHeaderOnlyWhereTheVersionDefaultDiffers) {
  Response response = Response::Text(404, "no\n");
  response.content_type.clear();
  EXPECT_EQ(SerializeResponse(response, Framing(11, false)),
            "HTTP/1.1 404 Not Found\r\nServer: tessera\r\nConnection: close\r\n"
            "Content-Length: 3\r\n\r\nno\n");
  EXPECT_EQ(SerializeResponse(response, Framing(10, true)),
            "HTTP/1.0 404 Not Found\r\nServer: tessera\r\nConnection: keep-alive\r\n"
            "Content-Length: 3\r\n\r\nno\n");
  EXPECT_EQ(SerializeResponse(response, Framing(10, false)),
            "HTTP/1.0 404 Not Found\r\nServer: tessera\r\nContent-Length: 3\r\n\r\nno\n");
}

TEST(ResponseWire, HeadCarriesTheLengthButNoBody) {
  Response response = Response::Text(200, "hello");
  EXPECT_EQ(SerializeResponse(response, Framing(11, true, true)),
            "HTTP/1.1 200 OK\r\nServer: tessera\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 5\r\n\r\n");
}

TEST(ResponseWire, NoContentAndNotModifiedHaveNeitherLengthNorBody) {
  for (const unsigned status : {204u, 304u}) {
    Response response = Response::Text(status, "ignored");
    response.content_type.clear();
    const std::string wire = SerializeResponse(response, Framing());
    EXPECT_EQ(wire.find("Content-Length"), std::string::npos) << status;
    EXPECT_EQ(wire.substr(wire.size() - 4), "\r\n\r\n") << status;
    EXPECT_EQ(wire.find("ignored"), std::string::npos) << status;
  }
}

TEST(ResponseWire, HeadersThatWouldSplitTheResponseAreLeftOutAndCounted) {
  Response response = Response::Text(200, "ok");
  response.content_type = "text/plain\r\nX-Evil: 1";
  response.headers = {{"X-Good", "fine"},
                      {"X-Bad", "a\r\nSet-Cookie: x=1"},
                      {"X Bad", "space in name"},
                      {"X:Bad", "colon in name"},
                      {"", "empty name"},
                      {"X-Nul", std::string("a\0b", 3)},
                      {"X-Lf", "a\nb"}};
  size_t dropped = 0;
  const std::string wire = SerializeResponse(response, Framing(), &dropped);
  EXPECT_EQ(dropped, 7u);
  EXPECT_EQ(wire,
            "HTTP/1.1 200 OK\r\nServer: tessera\r\nX-Good: fine\r\nContent-Length: 2\r\n\r\nok");
}

TEST(ResponseWire, UnknownStatusCodesKeepTheirNumber) {
  Response response = Response::Text(599, "");
  response.content_type.clear();
  const std::string wire = SerializeResponse(response, Framing());
  EXPECT_EQ(wire.rfind("HTTP/1.1 599 ", 0), 0u) << wire;
  EXPECT_NE(wire.find("Content-Length: 0\r\n\r\n"), std::string::npos);
}

}  // namespace
}  // namespace tessera::http
