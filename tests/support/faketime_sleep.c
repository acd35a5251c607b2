/* Preloaded before Debian's libfaketime 0.9.10 by tests/support/clock.py.
 *
 * With FAKETIME_DONT_FAKE_MONOTONIC=1, libfaketime 0.9.10 still rewrites the deadline of
 * clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ...) as if the monotonic clock were faked, and
 * hands the kernel a negative time: Python 3.11's time.sleep() then raises EINVAL
 * (wolfcw/libfaketime issue 426). The monotonic clock is real here, so its sleeps go straight to
 * the kernel; the wall clock's sleeps are left to libfaketime.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int clock_nanosleep(clockid_t clock_id, int flags, const struct timespec *req,
                    struct timespec *rem)
{
  static int (*next)(clockid_t, int, const struct timespec *, struct timespec *);

  if (clock_id == CLOCK_MONOTONIC || clock_id == CLOCK_BOOTTIME)
  {
    /* clock_nanosleep returns the error number instead of setting errno */
    return syscall(SYS_clock_nanosleep, clock_id, flags, req, rem) == 0 ? 0 : errno;
  }
  if (next == NULL)
  {
    next = (int (*)(clockid_t, int, const struct timespec *, struct timespec *))dlsym(
        RTLD_NEXT, "clock_nanosleep");
    if (next == NULL)
    {
      return ENOSYS;
    }
  }
  return next(clock_id, flags, req, rem);
}
