package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.TestProviders;
import io.srdma.verbs.VerbsException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A process out of file descriptors (a host at its {@code ulimit -n}): creating a completion queue
 * or a queue pair fails with a typed error or succeeds, and either way leaves nothing behind that
 * keeps the device context from closing (a CQ whose selector could not be opened once stayed
 * counted as a live child, and the host's close failed with "12 completion queue(s)").
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DescriptorExhaustionTest {
  @Test
  void shouldLeaveNoChildBehindWhenDescriptorsRunOut() throws IOException {
    DeviceContext ctx = TestProviders.device().open(new DeviceOptions());
    ProtectionDomain pd = ctx.allocateProtectionDomain();
    // everything this test's failure path needs is loaded before the descriptors run out
    CompletionQueue warm = ctx.createCompletionQueue(4);
    QueuePair warmQp = pd.createQueuePair(QueuePairAttributes.of(warm, 4, 1));
    warmQp.init(AccessFlags.REMOTE_WRITE);
    warmQp.close();
    warm.close();
    // and the failure's own classes (a class file needs a descriptor to load)
    assertTrue(
        new VerbsException(VerbsException.Reason.IO, "create_cq", "warm-up", new IOException())
                .reason()
            == VerbsException.Reason.IO);
    List<AutoCloseable> made = new ArrayList<>();
    int refused = 0;
    List<FileChannel> fillers = new ArrayList<>();
    try {
      fill(fillers);
      for (int i = 0; i < 4; i++) {
        try {
          CompletionQueue cq = ctx.createCompletionQueue(16);
          made.add(cq);
          QueuePair qp = pd.createQueuePair(QueuePairAttributes.of(cq, 4, 1));
          made.add(qp);
          qp.init(AccessFlags.REMOTE_WRITE);
        } catch (VerbsException e) {
          refused++;
        }
      }
    } finally {
      for (FileChannel f : fillers) {
        f.close();
      }
    }
    assertTrue(fillers.size() > 0, "the process ran out of descriptors at once");
    for (int i = made.size() - 1; i >= 0; i--) {
      AutoCloseable c = made.get(i);
      assertDoesNotThrow(c::close);
    }
    assertDoesNotThrow(pd::close, "refused " + refused + " creations");
    assertDoesNotThrow(ctx::close, "a failed creation left a child behind");
  }

  /** Opens /dev/null until the process has no descriptor left. */
  private static void fill(List<FileChannel> fillers) {
    Path devNull = Path.of("/dev/null");
    while (fillers.size() < 1_000_000) {
      try {
        fillers.add(FileChannel.open(devNull));
      } catch (IOException e) {
        return; // "Too many open files"
      }
    }
  }
}
