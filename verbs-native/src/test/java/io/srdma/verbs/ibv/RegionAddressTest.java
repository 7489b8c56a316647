package io.srdma.verbs.ibv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.TestProviders;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Regions are registered at a random I/O virtual address, so a peer must guess address bits besides
 * the R_Key (whose key part rxe draws from 8 random bits), and the IOVA works for local SGEs and
 * remote access alike.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RegionAddressTest {

  @Test
  void shouldDrawIovasWithRandomPageNumbersAndTheBuffersPageOffset() {
    Set<Long> pages = new HashSet<>();
    long orBits = 0;
    long andBits = -1;
    for (int i = 0; i < 10_000; i++) {
      long address = 0x7f00_1234_5000L + i * 8L + 0x9A8;
      long iova = IbvProtectionDomain.randomIova(address);
      assertEquals(address & 0xFFF, iova & 0xFFF, "page offset kept");
      long page = iova & IbvProtectionDomain.IOVA_RANDOM_MASK;
      assertNotEquals(0, page);
      assertEquals(iova & ~0xFFFL, page, "no bit above the random range");
      pages.add(page);
      orBits |= page;
      andBits &= page;
    }
    assertTrue(pages.size() > 9_990, "page numbers repeat: " + pages.size());
    assertEquals(IbvProtectionDomain.IOVA_RANDOM_MASK, orBits, "every random bit seen set");
    assertEquals(0, andBits, "every random bit seen clear");
    assertTrue(Long.bitCount(IbvProtectionDomain.IOVA_RANDOM_MASK) >= 24);
  }

  @Test
  void shouldRegisterAtARandomIovaThatLocalAndRemoteAccessUse() {
    String why = new IbvProvider().unavailableReason();
    assumeTrue(why == null, () -> "no RDMA device here (" + why + "); the qemu guest runs this");
    assumeTrue(
        Native.iova() != null, "this libibverbs has no ibv_reg_mr_iova2 (older than IBVERBS_1.8)");
    assumeTrue(IbvProvider.NAME.equals(TestProviders.name()), "run with -Dsrdma.test.provider=ibv");
    try (VerbsTestRig rig = VerbsTestRig.open(new DeviceOptions())) {
      ByteBuffer raw = ByteBuffer.allocateDirect(4096);
      long process = Native.MEMORY.getDirectBufferAddress(raw);
      MemoryRegion dst =
          rig.track(
              rig.pdB.registerMemory(raw, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE));
      assertNotEquals(process, dst.address(), "registered at its process address");
      assertEquals(process & 0xFFF, dst.address() & 0xFFF);
      MemoryRegion src = rig.register(rig.pdA, 4096, AccessFlags.LOCAL_WRITE);
      VerbsTestRig.fill(src, 5);
      rig.write(rig.qpA, 1, src, 0, 4096, dst.address(), dst.rkey());
      rig.expect(rig.cqA, WcStatus.SUCCESS, 1);
      assertEquals(src.buffer(), dst.buffer());
      // The process address is not an alias: a WRITE there is refused.
      rig.write(rig.qpA, 2, src, 0, 8, process, dst.rkey());
      rig.expect(rig.cqA, WcStatus.REM_ACCESS_ERR, 2);
    }
  }

  @Test
  void shouldRefuseRemoteRegionsWithoutIovaRegistrationUnlessAllowed() {
    String why = new IbvProvider().unavailableReason();
    assumeTrue(why == null, () -> "no RDMA device here (" + why + ")");
    assumeTrue(Native.iova() == null, "this libibverbs has ibv_reg_mr_iova2; nothing is refused");
    try (DeviceContext ctx = RdmaProviders.firstDevice("ibv").open(new DeviceOptions());
        ProtectionDomain pd = ctx.allocateProtectionDomain()) {
      VerbsException e =
          assertThrows(
              VerbsException.class,
              () ->
                  pd.registerMemory(
                      ByteBuffer.allocateDirect(4096),
                      AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE));
      assertEquals(VerbsException.Reason.NOT_SUPPORTED, e.reason());
      pd.registerMemory(ByteBuffer.allocateDirect(4096), AccessFlags.LOCAL_WRITE).close();
    }
    try (DeviceContext ctx =
            RdmaProviders.firstDevice("ibv")
                .open(new DeviceOptions().allowPlainRegionAddresses(true));
        ProtectionDomain pd = ctx.allocateProtectionDomain()) {
      pd.registerMemory(
              ByteBuffer.allocateDirect(4096), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE)
          .close();
    }
  }
}
