// What a test's tfd process holds open, read from /proc: its descriptors
// (socket inodes, and the targets of the others) and its TCP sockets with
// their state, for tests that assert what a task listens on or connects to.
//
//   for (const auto& s : TcpSocketsOf(pid)) if (s.listening()) ... s.local ...
//   CHECK(EstablishedTo(pid, 4711) == 0);
//
// Thread-safety: plain reads of /proc.
#pragma once

#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tfd::testing {

// The socket inodes of `pid`'s open descriptors, and the targets of the
// others ("/dev/shm/ucx_shm_posix_... (deleted)").
struct Descriptors {
  std::set<std::string> sockets;
  std::vector<std::pair<std::string, std::string>> files;  // path in /proc, target
};

inline Descriptors DescriptorsOf(pid_t pid) {
  Descriptors d;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* fds = opendir(dir.c_str());
  if (fds == nullptr) return d;
  while (dirent* e = readdir(fds)) {
    if (e->d_name[0] == '.') continue;
    char target[512] = {};
    const std::string path = dir + "/" + e->d_name;
    const ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    const std::string t(target, static_cast<size_t>(n));
    if (t.rfind("socket:[", 0) == 0) {
      d.sockets.insert(t.substr(8, t.size() - 9));
    } else {
      d.files.emplace_back(path, t);
    }
  }
  closedir(fds);
  return d;
}

// One TCP socket of a process: its local end as "IP:PORT" ("127.0.0.1",
// "*" for any address, else the kernel's hex), its peer's port, and its
// state in the kernel's hex (01 established, 0A listening).
struct TcpSocket {
  std::string local, state;
  int remote_port = 0;
  bool listening() const { return state == "0A"; }
  bool established() const { return state == "01"; }
};

// "IP:PORT" from /proc/net/tcp's hex "0100007F:1F90".
inline std::pair<std::string, int> ProcAddress(const std::string& hex) {
  const size_t colon = hex.find(':');
  const int port = std::stoi(hex.substr(colon + 1), nullptr, 16);
  std::string ip = hex.substr(0, colon);
  if (ip == "0100007F") ip = "127.0.0.1";
  else if (ip == "00000000" || ip == "00000000000000000000000000000000") ip = "*";
  return {ip + ":" + std::to_string(port), port};
}

// `pid`'s TCP sockets, from /proc/PID/net/tcp{,6} and its descriptors.
inline std::vector<TcpSocket> TcpSocketsOf(pid_t pid) {
  const Descriptors mine = DescriptorsOf(pid);
  std::vector<TcpSocket> out;
  for (const char* table : {"tcp", "tcp6"}) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/net/" + table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string slot, local, remote, state, queues, timer, retr, uid, timeout, inode;
      f >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
      if (mine.sockets.count(inode) == 0) continue;
      out.push_back({ProcAddress(local).first, state, ProcAddress(remote).second});
    }
  }
  return out;
}

// How many connections `pid` has open to `port` (on any address).
inline int EstablishedTo(pid_t pid, int port) {
  int n = 0;
  for (const TcpSocket& s : TcpSocketsOf(pid)) n += s.established() && s.remote_port == port;
  return n;
}

}  // namespace tfd::testing
