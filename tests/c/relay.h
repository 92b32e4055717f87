// A recording TCP relay for the handshake checks (bootstrap_check.cc,
// tcp_setup_check.cc): pump() copies bytes both ways between sockets a and b
// until either closes, records a -> b in *up and b -> a in *down (under *mu),
// then closes both.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <string>

inline void pump(int a, int b, std::mutex *mu, std::string *up, std::string *down) {
  pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
  for (bool open = true; open && poll(p, 2, 30000) > 0;)
    for (int i = 0; i < 2 && open; ++i) {
      if (p[i].revents == 0) continue;
      char buf[65536];
      ssize_t n = recv(p[i].fd, buf, sizeof(buf), 0);
      open = n > 0 && send(p[1 - i].fd, buf, n, MSG_NOSIGNAL) == n;
      std::lock_guard<std::mutex> lk(*mu);
      if (n > 0) (i == 0 ? up : down)->append(buf, n);
    }
  close(a);
  close(b);
}
