// Thread-safety annotations: clang's -Wthread-safety proves at compile time
// that state marked GUARDED_BY(mu) is touched only with `mu` held, and that a
// function marked REQUIRES(mu) is called only with it held. Under GCC the
// macros are empty. Clang checks them in `meson test thread_safety`
// (scripts/check-thread-safety.py, over the files that use them) and in the
// fuzz lane's clang build of the whole tree.
//
//   class Counter {
//    public:
//     void Add() EXCLUDES(mu_) { MutexLock lock(mu_); AddLocked(); }
//    private:
//     void AddLocked() REQUIRES(mu_) { ++n_; }
//     Mutex mu_;
//     int64_t n_ GUARDED_BY(mu_) = 0;
//   };
//
// The annotated mutex and scoped lock are in common/mutex.h: libstdc++'s
// std::mutex and std::lock_guard carry no annotations, so the analysis cannot
// see them lock anything. The names are clang's documented ones
// (clang.llvm.org/docs/ThreadSafetyAnalysis.html); all but SCOPED_CAPABILITY
// and NO_THREAD_SAFETY_ANALYSIS take arguments, so Cap'n Proto's enumerators
// of the same names (Kind::CAPABILITY, Message::RELEASE) are left alone.
#pragma once

#if defined(__clang__)
#define TFD_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TFD_THREAD_ANNOTATION(x)
#endif

// A type that is a lock (Mutex), named for messages ("mutex").
#define CAPABILITY(x) TFD_THREAD_ANNOTATION(capability(x))
// An RAII type that holds a capability for its lifetime (MutexLock).
#define SCOPED_CAPABILITY TFD_THREAD_ANNOTATION(scoped_lockable)
// A data member read and written only with the given mutex held.
#define GUARDED_BY(x) TFD_THREAD_ANNOTATION(guarded_by(x))
// A pointer member whose pointee is read and written only with it held.
#define PT_GUARDED_BY(x) TFD_THREAD_ANNOTATION(pt_guarded_by(x))
// A function called only with the mutexes held (and returning with them held).
#define REQUIRES(...) TFD_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// A function called only without them (it takes them itself).
#define EXCLUDES(...) TFD_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// A function that takes the mutexes (or, on a lock type, its own) and holds them on return.
#define ACQUIRE(...) TFD_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
// A function that releases the mutexes (or, on a lock type, its own).
#define RELEASE(...) TFD_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// A function that takes them when it returns the given value.
#define TRY_ACQUIRE(...) TFD_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// A function returning a reference to the mutex named: locking the result is
// locking that mutex (Variable::mu()).
#define RETURN_CAPABILITY(x) TFD_THREAD_ANNOTATION(lock_returned(x))
// Opts one function out of the analysis: only where it cannot follow the
// locking (a set of locks chosen at run time); say why beside it.
#define NO_THREAD_SAFETY_ANALYSIS TFD_THREAD_ANNOTATION(no_thread_safety_analysis)
