package io.srdma.verbs;

import io.srdma.verbs.internal.LinuxLibC;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.size_t;

/**
 * Which CPUs the calling thread may run on: Linux {@code sched_setaffinity} / {@code
 * sched_getaffinity} of the thread itself (a thread places only itself). A pin either takes effect
 * exactly as asked or fails: a set the kernel would narrow (CPUs offline, outside the process's
 * cgroup or {@code taskset}) is refused and the thread's previous set restored. Elsewhere than
 * 64-bit Linux every call fails with {@code NOT_SUPPORTED}; nothing is ignored silently. Threads
 * started by a pinned thread inherit its set (Linux {@code clone}). Thread-safe.
 */
public final class CpuAffinity {
  private static final String VERB = "set_affinity";

  /** {@code cpu_set_t} in 64-bit words: 1024 CPUs. */
  private static final int WORDS = (CpuSet.MAX_CPU + 1) / 64;

  /** libc's affinity calls (public for jnr-ffi). */
  public interface LibC {
    @SaveError
    int sched_setaffinity(int pid, @size_t long size, @In long[] mask);

    @SaveError
    int sched_getaffinity(int pid, @size_t long size, @Out long[] mask);
  }

  private static final LibC LIBC = LinuxLibC.bind(LibC.class);

  private CpuAffinity() {}

  /** Whether this platform can pin threads (64-bit Linux with a loadable libc). */
  public static boolean supported() {
    return LIBC != null;
  }

  /**
   * The CPUs the calling thread may run on now.
   *
   * @throws VerbsException NOT_SUPPORTED off 64-bit Linux, IO when the kernel refuses
   */
  public static CpuSet current() {
    LibC c = require();
    long[] mask = new long[WORDS];
    if (c.sched_getaffinity(0, WORDS * 8L, mask) != 0) {
      throw new VerbsException(
          VerbsException.Reason.IO, VERB, "sched_getaffinity failed: errno " + errno(c));
    }
    CpuSet set = CpuSet.fromMask(mask);
    if (set == null) {
      throw new VerbsException(VerbsException.Reason.IO, VERB, "sched_getaffinity gave no CPU");
    }
    return set;
  }

  /**
   * Confines the calling thread to {@code cpus}, exactly.
   *
   * @throws VerbsException INVALID_ARGUMENT when a CPU of the set is not one this thread may use
   *     (the message names the CPUs it may use; the thread keeps its previous set), NOT_SUPPORTED
   *     off 64-bit Linux, IO when the kernel refuses for another reason
   */
  public static void pinCurrentThread(CpuSet cpus) {
    LibC c = require();
    CpuSet before = current();
    if (c.sched_setaffinity(0, WORDS * 8L, cpus.mask(WORDS)) != 0) {
      int errno = errno(c);
      // EINVAL: no CPU of the set is online and allowed
      throw new VerbsException(
          errno == 22 ? VerbsException.Reason.INVALID_ARGUMENT : VerbsException.Reason.IO,
          VERB,
          "cannot pin thread '"
              + Thread.currentThread().getName()
              + "' to CPUs "
              + cpus
              + ": sched_setaffinity errno "
              + errno
              + " (it may run on "
              + before
              + ")");
    }
    CpuSet after = current();
    if (!after.equals(cpus)) {
      c.sched_setaffinity(0, WORDS * 8L, before.mask(WORDS));
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          VERB,
          "cannot pin thread '"
              + Thread.currentThread().getName()
              + "' to CPUs "
              + cpus
              + ": the kernel allows only "
              + after
              + " of them (offline, or outside this process's cpuset); it stays on "
              + before);
    }
  }

  private static LibC require() {
    if (LIBC == null) {
      throw new VerbsException(
          VerbsException.Reason.NOT_SUPPORTED,
          VERB,
          "CPU affinity needs 64-bit Linux; this is "
              + System.getProperty("os.name")
              + " "
              + System.getProperty("os.arch"));
    }
    return LIBC;
  }

  private static int errno(LibC c) {
    return Runtime.getRuntime(c).getLastError();
  }
}
