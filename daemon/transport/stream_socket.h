// The socket under a data-plane stream (stream_frames.h) to a task of this
// host, sized for tensors.
//
// Over loopback a stream's bytes are two kernel copies, one on each side:
// the sender's write into the socket and the receiver's read out of it,
// each straight from and into the tensor's own memory. What remains to
// waste is wake-ups: with the kernel's default buffers (autotuning from
// 16 KiB to send and 128 KiB to receive) a 64 MiB tensor took ~80-100
// context switches on the receiver and the two ends kept stalling on each
// other's small window. SizeStreamSocket asks for kStreamSocketBytes of
// send and receive buffer on a loopback socket (bench/NOTES.md, "The data
// plane"). It leaves alone a socket to another host, whose buffers the
// kernel's autotuning sizes to the path (an explicit size would stop it),
// and any socket where the kernel caps buffers below kStreamSocketBytes
// (net.core.wmem_max, rmem_max), where an explicit size would be smaller
// than what autotuning reaches.
//
//   kj::Own<kj::AsyncIoStream> socket = ...connect() or accept()...;
//   SizeStreamSocket(*socket);   // the socket itself, before TLS wraps it
//
// Thread-safety: the stream's event-loop thread.
#pragma once

#include <kj/async-io.h>

#include <cstddef>

namespace tfd {

inline constexpr size_t kStreamSocketBytes = size_t{4} << 20;

// Best effort; returns whether it sized `socket`. A stream that is not a
// socket, a peer on another host or a kernel that caps buffers lower keeps
// the kernel's sizes.
bool SizeStreamSocket(kj::AsyncIoStream& socket);

// Whether `socket`'s peer is on this host: a loopback address (127.0.0.0/8,
// ::1, ::ffff:127.x) or a Unix socket. False when it cannot tell.
bool PeerIsLoopback(kj::AsyncIoStream& socket);

}  // namespace tfd
