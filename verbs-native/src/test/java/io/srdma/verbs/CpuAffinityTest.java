package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A pin takes effect exactly, as the kernel sees it, or fails and changes nothing. */
class CpuAffinityTest {
  /** The kernel's view of the calling thread's CPUs. */
  static String kernelCpuList() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/thread-self/status"))) {
      if (line.startsWith("Cpus_allowed_list:")) {
        return line.substring(line.indexOf(':') + 1).strip();
      }
    }
    throw new AssertionError("no Cpus_allowed_list in /proc/thread-self/status");
  }

  /** Runs {@code body} on a fresh thread (pins never leak into the test runner's threads). */
  private static void onFreshThread(ThrowingRunnable body) throws Throwable {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              try {
                body.run();
              } catch (Throwable e) {
                failure.set(e);
              }
            },
            "cpu-affinity-test");
    t.start();
    t.join(10_000);
    if (failure.get() != null) {
      throw failure.get();
    }
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  @Test
  void aThreadPinsItselfToExactlyTheSetAsked() throws Throwable {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    onFreshThread(
        () -> {
          CpuSet all = CpuAffinity.current();
          assertEquals(all.toString(), kernelCpuList());
          CpuSet last = CpuSet.of(all.toArray()[all.size() - 1]);
          CpuAffinity.pinCurrentThread(last);
          assertEquals(last, CpuAffinity.current());
          assertEquals(last.toString(), kernelCpuList());
          CpuAffinity.pinCurrentThread(all); // and back
          assertEquals(all.toString(), kernelCpuList());
        });
  }

  @Test
  void aSetTheKernelWouldNarrowIsRefusedAndTheThreadKeepsItsCpus() throws Throwable {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    onFreshThread(
        () -> {
          CpuSet before = CpuAffinity.current();
          int absent = CpuSet.MAX_CPU; // no test machine has 1024 CPUs online
          assumeTrue(!before.contains(absent), "this machine may run on CPU " + absent);
          // wholly outside: EINVAL from the kernel
          VerbsException none =
              assertThrows(
                  VerbsException.class, () -> CpuAffinity.pinCurrentThread(CpuSet.of(absent)));
          assertEquals(VerbsException.Reason.INVALID_ARGUMENT, none.reason());
          assertTrue(none.getMessage().contains("1023"), none.getMessage());
          assertEquals(before.toString(), kernelCpuList());
          // partly outside: the kernel would narrow it; refused, not narrowed
          CpuSet partly = CpuSet.parse(before.toArray()[0] + "," + absent);
          VerbsException some =
              assertThrows(VerbsException.class, () -> CpuAffinity.pinCurrentThread(partly));
          assertEquals(VerbsException.Reason.INVALID_ARGUMENT, some.reason());
          assertTrue(some.getMessage().contains("allows only"), some.getMessage());
          assertEquals(before.toString(), kernelCpuList());
        });
  }

  @Test
  void aPlacementReportsItsFailureToTheStarter() throws Throwable {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    ThreadPlacement p = new ThreadPlacement(CpuSet.of(CpuSet.MAX_CPU));
    Thread t = new Thread(p::apply, "placement-test");
    t.start();
    VerbsException e = assertThrows(VerbsException.class, () -> p.awaitApplied("the test thread"));
    assertEquals(VerbsException.Reason.INVALID_ARGUMENT, e.reason());
    assertTrue(e.getMessage().contains("the test thread cannot be placed"), e.getMessage());
    t.join(10_000);
    new ThreadPlacement(null).awaitApplied("nothing"); // no CPUs: nothing to wait for
  }
}
