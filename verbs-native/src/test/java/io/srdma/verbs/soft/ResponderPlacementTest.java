package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CpuAffinity;
import io.srdma.verbs.CpuSet;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.TestProviders;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The soft responders run on the CPUs the device options name, or the device does not open. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResponderPlacementTest {
  /** Threads of this process whose kernel name starts with {@code prefix}, and their CPU lists. */
  static List<String> cpuListsOf(String prefix) throws IOException {
    try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
      return tasks
          .map(
              t -> {
                String name = null;
                String cpus = null;
                try {
                  for (String line : Files.readAllLines(t.resolve("status"))) {
                    if (line.startsWith("Name:")) {
                      name = line.substring(5).strip();
                    } else if (line.startsWith("Cpus_allowed_list:")) {
                      cpus = line.substring(18).strip();
                    }
                  }
                } catch (NoSuchFileException e) {
                  return null; // the thread ended meanwhile
                } catch (IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
                return name != null && name.startsWith(prefix) ? cpus : null;
              })
          .filter(c -> c != null)
          .toList();
    }
  }

  private static Set<Thread> javaThreads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith(prefix))
        .collect(Collectors.toSet());
  }

  @Test
  void everyResponderOfTheDeviceRunsOnTheCpusAsked() throws Exception {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    assumeTrue("soft".equals(TestProviders.name()), "the rig runs the soft provider only");
    CpuSet all = CpuAffinity.current();
    assumeTrue(all.size() >= 2, "needs 2 CPUs to tell a pinned thread from an unpinned one");
    CpuSet last = CpuSet.of(all.toArray()[all.size() - 1]);
    // the kernel truncates thread names to 15 characters: "srdma-soft-resp"
    long before = cpuListsOf("srdma-soft-resp").stream().filter(last.toString()::equals).count();
    DeviceOptions pinned = new DeviceOptions().responderCpus(last);
    try (VerbsTestRig rig = VerbsTestRig.open(pinned)) { // two soft contexts, both pinned
      long after = cpuListsOf("srdma-soft-resp").stream().filter(last.toString()::equals).count();
      assertEquals(before + 2L * SoftDeviceContext.RESPONDER_THREADS, after, "pinned responders");
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst =
          rig.register(rig.pdB, 64, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      VerbsTestRig.fill(src, 7);
      rig.write(rig.qpA, 1, src, 0, 64, dst.address(), dst.rkey());
      assertEquals(WcStatus.SUCCESS, rig.awaitOne(rig.cqA).status());
      for (int i = 0; i < 64; i++) {
        assertEquals(src.buffer().get(i), dst.buffer().get(i), "byte " + i);
      }
    }
  }

  @Test
  void aSetTheResponderCannotHaveFailsTheOpenAndLeavesNothingRunning() throws Exception {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    assumeTrue(!CpuAffinity.current().contains(CpuSet.MAX_CPU), "this machine has CPU 1023");
    Set<Thread> threadsBefore = javaThreads("srdma-soft-");
    DeviceOptions impossible = new DeviceOptions().responderCpus(CpuSet.of(CpuSet.MAX_CPU));
    VerbsException e =
        assertThrows(
            VerbsException.class,
            () -> RdmaProviders.firstDevice(SoftProvider.NAME).open(impossible));
    assertEquals(VerbsException.Reason.INVALID_ARGUMENT, e.reason());
    assertTrue(e.getMessage().contains("1023"), e.getMessage());
    assertTrue(e.getMessage().contains("soft responder"), e.getMessage());
    for (Thread t : javaThreads("srdma-soft-")) {
      if (!threadsBefore.contains(t)) {
        t.join(10_000); // the timer's thread ends just after shutdownNow returns
      }
    }
    assertEquals(threadsBefore, javaThreads("srdma-soft-"), "threads left by the failed open");
  }

  @Test
  void aBadCpuListPropertyIsRefusedNamingIt() {
    String old = System.getProperty(DeviceOptions.RESPONDER_CPUS_PROP_NAME);
    System.setProperty(DeviceOptions.RESPONDER_CPUS_PROP_NAME, "1-x");
    try {
      DeviceOptions o = new DeviceOptions();
      VerbsException e = assertThrows(VerbsException.class, o::conclude);
      assertEquals(VerbsException.Reason.INVALID_ARGUMENT, e.reason());
      assertTrue(e.getMessage().contains(DeviceOptions.RESPONDER_CPUS_PROP_NAME), e.getMessage());
      System.setProperty(DeviceOptions.RESPONDER_CPUS_PROP_NAME, "0,1");
      assertEquals(CpuSet.of(0, 1), new DeviceOptions().responderCpus());
    } finally {
      if (old == null) {
        System.clearProperty(DeviceOptions.RESPONDER_CPUS_PROP_NAME);
      } else {
        System.setProperty(DeviceOptions.RESPONDER_CPUS_PROP_NAME, old);
      }
    }
  }
}
