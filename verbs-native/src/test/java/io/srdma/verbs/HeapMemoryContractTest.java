package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Heap memory as a region: refused everywhere except as the local side of requests on a device
 * whose {@link DeviceAttributes#localHeapMemory()} says so (loopback), and there it moves the same
 * bytes under the same checks as direct memory.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HeapMemoryContractTest {
  private static final int RW =
      AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

  private static void assumeHeapMemory(VerbsTestRig rig) {
    assumeTrue(
        rig.ctxA.queryDevice().localHeapMemory(),
        TestProviders.name() + " does not take heap memory (DeviceAttributes.localHeapMemory)");
  }

  @Test
  void shouldRefuseHeapMemoryUnlessTheDeviceTakesItAndNeverWithRemoteRights() {
    try (DeviceContext ctx = TestProviders.device().open(new DeviceOptions());
        ProtectionDomain pd = ctx.allocateProtectionDomain()) {
      boolean takesHeap = ctx.queryDevice().localHeapMemory();
      int[] remote = {
        AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE,
        AccessFlags.REMOTE_READ,
        AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND,
        RW
      };
      for (int access : remote) {
        VerbsException e =
            assertThrows(
                VerbsException.class, () -> pd.registerMemory(ByteBuffer.allocate(64), access));
        assertEquals(VerbsException.Reason.INVALID_ARGUMENT, e.reason(), "access " + access);
        assertTrue(e.getMessage().contains("direct ByteBuffer"), e.getMessage());
      }
      assertEquals(
          VerbsException.Reason.INVALID_ARGUMENT,
          assertThrows(
                  VerbsException.class,
                  () ->
                      pd.registerMemory(
                          ByteBuffer.allocate(64).asReadOnlyBuffer(), AccessFlags.LOCAL_WRITE))
              .reason());
      for (int access : new int[] {AccessFlags.LOCAL_WRITE, 0}) {
        if (takesHeap) {
          try (MemoryRegion mr = pd.registerMemory(ByteBuffer.allocate(64), access)) {
            assertEquals(64, mr.length());
          }
        } else {
          VerbsException e =
              assertThrows(
                  VerbsException.class, () -> pd.registerMemory(ByteBuffer.allocate(64), access));
          assertEquals(VerbsException.Reason.INVALID_ARGUMENT, e.reason());
          assertTrue(e.getMessage().contains("direct ByteBuffer"), e.getMessage());
        }
      }
    }
  }

  @Test
  void shouldWriteFromAndReadIntoHeapMemoryUnderTheUsualChecks() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      assumeHeapMemory(rig);
      // a heap slice with an array offset: the region is the slice, not the whole array
      byte[] array = new byte[8192 + 32];
      ByteBuffer slice = ByteBuffer.wrap(array, 32, 8192).slice();
      MemoryRegion src = rig.track(rig.pdA.registerMemory(slice, AccessFlags.LOCAL_WRITE));
      MemoryRegion dst = rig.register(rig.pdB, 8192, RW);
      VerbsTestRig.fill(src, 29);
      for (int i = 0; i < 32; i++) {
        array[i] = (byte) 0xEE; // outside the region: never sent
      }
      rig.write(rig.qpA, 1, src, 100, 5000, dst.address() + 7, dst.rkey());
      rig.expect(rig.cqA, WcStatus.SUCCESS, 1);
      for (int i = 0; i < 5000; i++) {
        assertEquals(array[32 + 100 + i], dst.buffer().get(7 + i), "byte " + i);
      }
      VerbsTestRig.assertAll(dst, 0, 7, (byte) 0);
      VerbsTestRig.assertAll(dst, 5007, 8192, (byte) 0);

      // READ back into another part of the heap region
      rig.read(rig.qpA, 2, src, 6000, 1000, dst.address() + 7, dst.rkey());
      rig.expect(rig.cqA, WcStatus.SUCCESS, 2);
      for (int i = 0; i < 1000; i++) {
        assertEquals(array[32 + 100 + i], array[32 + 6000 + i], "read byte " + i);
      }
      for (int i = 0; i < 32; i++) {
        assertEquals((byte) 0xEE, array[i], "byte before the region");
      }

      // a source past the heap region's end: local protection error, nothing placed
      dst.buffer().put(0, new byte[8192]);
      rig.write(rig.qpA, 3, src, 8000, 193, dst.address(), dst.rkey());
      rig.expect(rig.cqA, WcStatus.LOC_PROT_ERR, 3);
      VerbsTestRig.assertAll(dst, 0, 8192, (byte) 0);
      rig.expectNone(rig.cqB, Duration.ofMillis(100));
    }
  }

  /**
   * Attack: a heap region gets an R_Key like any region; a peer that learns it (and the address)
   * and WRITEs or READs through it is refused (no remote rights), and the array stays as it was.
   */
  @Test
  void shouldRefuseRemoteAccessToHeapMemoryThroughItsRkey() {
    for (WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ}) {
      try (VerbsTestRig rig = VerbsTestRig.open()) {
        assumeHeapMemory(rig);
        byte[] victim = new byte[256];
        java.util.Arrays.fill(victim, (byte) 0x33);
        MemoryRegion heap =
            rig.track(rig.pdB.registerMemory(ByteBuffer.wrap(victim), AccessFlags.LOCAL_WRITE));
        MemoryRegion local = rig.register(rig.pdA, 256, AccessFlags.LOCAL_WRITE);
        VerbsTestRig.fill(local, 9);
        ByteBuffer before = ByteBuffer.allocate(256).put(local.buffer().duplicate()).flip();
        if (op == WrOpcode.RDMA_WRITE) {
          rig.write(rig.qpA, 1, local, 0, 64, heap.address(), heap.rkey());
        } else {
          rig.read(rig.qpA, 1, local, 0, 64, heap.address(), heap.rkey());
        }
        rig.expect(rig.cqA, WcStatus.REM_ACCESS_ERR, 1);
        for (byte b : victim) {
          assertEquals((byte) 0x33, b, op + " reached heap memory");
        }
        assertEquals(before, local.buffer(), op + ": nothing placed in the requester's memory");
      }
    }
  }

  @Test
  void shouldRefuseAReadIntoHeapMemoryWithoutLocalWrite() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      assumeHeapMemory(rig);
      byte[] array = new byte[64];
      MemoryRegion local = rig.track(rig.pdA.registerMemory(ByteBuffer.wrap(array), 0));
      MemoryRegion remote = rig.register(rig.pdB, 64, RW);
      VerbsTestRig.fill(remote, 5);
      rig.read(rig.qpA, 1, local, 0, 8, remote.address(), remote.rkey());
      rig.expect(rig.cqA, WcStatus.LOC_PROT_ERR, 1);
      for (byte b : array) {
        assertEquals(0, b);
      }
    }
  }
}
