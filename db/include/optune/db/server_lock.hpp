// A lock held on the PostgreSQL server of a shared database: an advisory lock of a connection of
// its own, named by text ("device 1a2b... on host lab-7"), held as long as the object lives. The
// server releases it when its holder exits, even by SIGKILL, or loses its connection; so, as the
// machine's flock(2) locks (tuner/jobs/device_lock.hpp) keep the runs of one machine apart, these
// keep apart the runs of every machine that writes to one database. A held lock carries its
// holder's words ("optune tune, pid 1234 on lab-7", the connection's application_name) for the
// message of a run refused.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace optune::db {

// This machine's host name ("an unknown host" where it has none): what names a device's lock on a
// server (a device is its fingerprint id on a host) and a holder in the lock's words.
std::string host_name();

class ServerLock {
 public:
  enum class Mode { kExclusive, kShared };
  // Takes the lock without waiting; nullopt when another session holds it in a conflicting mode
  // (`holder` then says who). Throws DatabaseError when the server cannot be reached.
  static std::optional<ServerLock> try_acquire(const std::string& uri, const std::string& name, Mode mode,
                                               const std::string& who, std::string* holder = nullptr);
  // Waits until it is free (the server answers once it grants it).
  static ServerLock acquire(const std::string& uri, const std::string& name, Mode mode, const std::string& who);

  ServerLock(ServerLock&&) noexcept;
  ServerLock& operator=(ServerLock&&) noexcept;
  ~ServerLock();

 private:
  struct Session;
  explicit ServerLock(std::unique_ptr<Session> session);
  std::unique_ptr<Session> session_;
};

}  // namespace optune::db
