#include "common/thread_name.h"

#include <pthread.h>

#include <algorithm>
#include <array>
#include <utility>

namespace tessera {

void NameThisThread(std::string_view name) {
  std::array<char, 16> cut{};  // the kernel's TASK_COMM_LEN, with the NUL
  const size_t length = std::min(name.size(), cut.size() - 1);
  std::copy_n(name.data(), length, cut.data());
  (void)pthread_setname_np(pthread_self(), cut.data());
}

std::thread StartNamedThread(std::string name, std::function<void()> body) {
  return std::thread([name = std::move(name), body = std::move(body)] {
    NameThisThread(name);
    body();
  });
}

}  // namespace tessera
