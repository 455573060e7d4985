#include "experiment/queue_shaper.h"

// glibc's netinet/in.h first: the netfilter headers' linux/in.h then
// leaves glibc's definitions alone.
#include <netinet/in.h>
// clang-format off
#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
// clang-format on
#include <fcntl.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/check.h"
#include "common/thread_name.h"
#include "experiment/delay_queue.h"

namespace tessera::experiment {

namespace {

constexpr int kSolNetlink = 270;             // SOL_NETLINK
constexpr int kNetlinkNoEnobufs = 5;         // NETLINK_NO_ENOBUFS
constexpr int kSocketBufferBytes = 8 << 20;  // netlink messages waiting for the shaper
constexpr int kEventsMax = 16;

int64_t MonotonicNanos() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

struct QueueShaper::Impl {
  struct Queue {
    nfq_handle* handle = nullptr;
    nfq_q_handle* queue = nullptr;
    int fd = -1;
  };

  Impl(const NetnsShaping& shaping, uint64_t seed) : draw(shaping, seed), held(kShaperHeldMax) {}
  ~Impl() {
    for (Queue& q : queues) {
      if (q.queue != nullptr) nfq_destroy_queue(q.queue);
      if (q.handle != nullptr) nfq_close(q.handle);
    }
    for (int fd : {epoll_fd, timer_fd, stop_fd}) {
      if (fd >= 0) ::close(fd);
    }
  }

  // On a thread of its own (setns moves the calling thread): binds the
  // queue in each namespace.
  Status BindAll(const std::vector<std::string>& paths) {
    epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    timer_fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    stop_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd < 0 || timer_fd < 0 || stop_fd < 0) return Status::IOError(Errno("queue shaper"));
    if (Status st = Watch(timer_fd, kTimerTag); !st.ok()) return st;
    if (Status st = Watch(stop_fd, kStopTag); !st.ok()) return st;
    for (const std::string& path : paths) {
      const int ns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0) return Status::IOError(Errno("queue shaper: " + path));
      const int entered = ::setns(ns, CLONE_NEWNET);
      ::close(ns);
      if (entered != 0) return Status::IOError(Errno("queue shaper: setns " + path));
      Queue& q = queues.emplace_back();
      q.handle = nfq_open();
      if (q.handle == nullptr) return Status::IOError(Errno("queue shaper: nfq_open in " + path));
      q.queue = nfq_create_queue(q.handle, kNetnsShaperQueue, &Impl::OnPacket, this);
      if (q.queue == nullptr) {
        return Status::IOError(Errno("queue shaper: binding NFQUEUE " +
                                     std::to_string(kNetnsShaperQueue) + " in " + path));
      }
      // Metadata only: the verdict needs the packet's id, not its bytes.
      if (nfq_set_mode(q.queue, NFQNL_COPY_META, 0) < 0 ||
          nfq_set_queue_maxlen(q.queue, static_cast<uint32_t>(kShaperHeldMax)) < 0 ||
          nfq_set_queue_flags(q.queue, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN) < 0) {
        return Status::IOError(Errno("queue shaper: configuring the queue in " + path));
      }
      q.fd = nfq_fd(q.handle);
      const int one = 1;
      (void)::setsockopt(q.fd, SOL_SOCKET, SO_RCVBUFFORCE, &kSocketBufferBytes, sizeof kSocketBufferBytes);
      (void)::setsockopt(q.fd, kSolNetlink, kNetlinkNoEnobufs, &one, sizeof one);
      if (::fcntl(q.fd, F_SETFL, ::fcntl(q.fd, F_GETFL) | O_NONBLOCK) != 0) {
        return Status::IOError(Errno("queue shaper: fcntl"));
      }
      if (Status st = Watch(q.fd, queues.size() - 1); !st.ok()) return st;
    }
    return Status::Ok();
  }

  Status Watch(int fd, uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) return Status::IOError(Errno("epoll_ctl"));
    return Status::Ok();
  }

  static int OnPacket(nfq_q_handle* queue, nfgenmsg*, nfq_data* data, void* self) {
    auto* impl = static_cast<Impl*>(self);
    const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(data);
    if (header == nullptr) return 0;
    const uint32_t id = ntohl(header->packet_id);
    const PacketFate fate = impl->draw.Next();
    if (fate.lost) {
      impl->lost.fetch_add(1, std::memory_order_relaxed);
      return nfq_set_verdict(queue, id, NF_DROP, 0, nullptr);
    }
    if (!impl->held.Push(MonotonicNanos() + fate.delay_ns, HeldPacket{impl->current, id})) {
      impl->overflow.fetch_add(1, std::memory_order_relaxed);
      return nfq_set_verdict(queue, id, NF_ACCEPT, 0, nullptr);
    }
    return 0;
  }

  void Accept(const std::vector<HeldPacket>& packets) {
    for (const HeldPacket& p : packets) {
      (void)nfq_set_verdict(queues[p.queue].queue, p.id, NF_ACCEPT, 0, nullptr);
    }
  }

  void Drain(size_t index) {
    char buf[64 << 10];
    current = index;
    for (;;) {
      const ssize_t n = ::recv(queues[index].fd, buf, sizeof buf, 0);
      if (n <= 0) return;  // EAGAIN: read everything; other errors: the next event
      (void)nfq_handle_packet(queues[index].handle, buf, static_cast<int>(n));
    }
  }

  void ArmTimer() {
    itimerspec when{};
    if (std::optional<int64_t> next = held.NextRelease()) {
      // An absolute time of 0 would disarm: at least 1 ns.
      const int64_t at = std::max<int64_t>(*next, 1);
      when.it_value.tv_sec = at / 1'000'000'000;
      when.it_value.tv_nsec = at % 1'000'000'000;
    }
    (void)::timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &when, nullptr);
  }

  void Loop() {
    NameThisThread("netns-shaper");
    epoll_event events[kEventsMax];
    for (;;) {
      const int n = ::epoll_wait(epoll_fd, events, kEventsMax, -1);
      if (n < 0 && errno != EINTR) break;
      for (int i = 0; i < n; ++i) {
        const uint64_t tag = events[i].data.u64;
        if (tag == kStopTag) {
          Accept(held.PopAll());
          return;
        }
        if (tag == kTimerTag) {
          uint64_t expirations;
          (void)::read(timer_fd, &expirations, sizeof expirations);
          continue;
        }
        Drain(static_cast<size_t>(tag));
      }
      const std::vector<HeldPacket> due = held.PopDue(MonotonicNanos());
      Accept(due);
      delayed.fetch_add(due.size(), std::memory_order_relaxed);
      ArmTimer();
    }
    Accept(held.PopAll());
  }

  static constexpr uint64_t kTimerTag = ~uint64_t{0};
  static constexpr uint64_t kStopTag = ~uint64_t{0} - 1;

  std::vector<Queue> queues;
  DelayDraw draw;
  DelayQueue held;
  size_t current = 0;  // the queue whose messages are being handled
  int epoll_fd = -1;
  int timer_fd = -1;
  int stop_fd = -1;
  std::atomic<uint64_t> delayed{0};
  std::atomic<uint64_t> lost{0};
  std::atomic<uint64_t> overflow{0};
};

Result<std::unique_ptr<QueueShaper>> QueueShaper::Start(const std::vector<std::string>& namespace_paths,
                                                        const NetnsShaping& shaping, uint64_t seed) {
  auto impl = std::make_unique<Impl>(shaping, seed);
  Status bound;
  std::thread binder([&] { bound = impl->BindAll(namespace_paths); });
  binder.join();
  if (!bound.ok()) return bound;  // ~Impl unbinds what was bound
  std::unique_ptr<QueueShaper> shaper(new QueueShaper(std::move(impl)));
  shaper->thread_ = std::thread([p = shaper->impl_.get()] { p->Loop(); });
  return shaper;
}

QueueShaper::QueueShaper(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

QueueShaper::~QueueShaper() { Stop(); }

void QueueShaper::Stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  TESSERA_CHECK(::write(impl_->stop_fd, &one, sizeof one) == sizeof one);
  thread_.join();
}

ShaperCounters QueueShaper::counters() const {
  return ShaperCounters{impl_->delayed.load(), impl_->lost.load(), impl_->overflow.load()};
}

}  // namespace tessera::experiment
