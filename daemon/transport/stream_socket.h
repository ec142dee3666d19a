// The socket under a data-plane stream (stream_frames.h) to a task of this
// host, sized for tensors.
//
// Over loopback a stream's bytes are two kernel copies, one on each side:
// the sender's write into the socket and the receiver's read out of it,
// each straight from and into the tensor's own memory. What is left to
// lose is wake-ups. Under the kernel's autotuning the sender's buffer stops
// at tcp_wmem's limit (4 MiB on the build VM) while the receiver's grows to
// tcp_rmem's (32 MiB there); asking for kStreamSocketBytes on both (the
// kernel grants twice that) halved the context switches per 256 MiB
// transfer on both ends and gave the best rate, sizing the send side alone
// fell between (bench/NOTES.md, "The data plane"). SizeStreamSocket sizes a
// loopback socket only (a task of this host named by a LAN address counts
// as another host). It leaves alone a socket to another host, whose
// buffers autotuning sizes to the path (an explicit size stops it), and any
// socket where the kernel caps buffers below kStreamSocketBytes
// (net.core.wmem_max, rmem_max): there an explicit size would be smaller
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
