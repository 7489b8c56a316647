package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Batches of growing size through one QP: the requester's header slots start at one and double when
 * a batch fills them, flushing what it holds first; every request of every batch lands and
 * completes in order, inline (small) and gathered (large) payloads alike.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SoftBatchPostTest {
  private static final int[] BATCHES = {1, 2, 3, 5, 8, 13, 21, 64, 64, 1, 40};
  private static final int SMALL = 100; // inline
  private static final int LARGE = 1000; // gathered

  @Test
  void shouldDeliverBatchesOfEverySizeInOrder() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      int requests = 0;
      for (int b : BATCHES) {
        requests += b;
      }
      int size = requests * LARGE;
      MemoryRegion src = rig.register(rig.pdA, size, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst =
          rig.register(rig.pdB, size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      VerbsTestRig.fill(src, 3);
      long wrId = 0;
      for (int b : BATCHES) {
        SendWorkRequest[] wrs = new SendWorkRequest[b];
        for (int i = 0; i < b; i++) {
          long at = wrId * LARGE;
          int len = wrId % 2 == 0 ? SMALL : LARGE;
          wrs[i] =
              new SendWorkRequest(1)
                  .wrId(wrId)
                  .opcode(WrOpcode.RDMA_WRITE)
                  .remote(dst.address() + at, dst.rkey());
          wrs[i].sgl().set(src, (int) at, len);
          wrId++;
        }
        rig.qpA.postSend(wrs, b);
      }
      for (long i = 0; i < wrId; i++) {
        rig.expect(rig.cqA, WcStatus.SUCCESS, i);
      }
      for (long i = 0; i < wrId; i++) {
        int at = (int) i * LARGE;
        int len = i % 2 == 0 ? SMALL : LARGE;
        ByteBuffer want = src.buffer().duplicate().position(at).limit(at + len);
        ByteBuffer got = dst.buffer().duplicate().position(at).limit(at + len);
        assertEquals(want, got, "request " + i);
      }
    }
  }
}
