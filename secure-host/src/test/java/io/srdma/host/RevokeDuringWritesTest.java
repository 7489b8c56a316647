package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteResult;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A grant revoked while its holder keeps writing: a write in flight when the window is invalidated
 * fails the queue pair, and the host ends the session for it — but only after the REVOKE notice, so
 * the holder learns the grant was revoked, not merely that its session closed (the race once seen
 * in CI as SESSION_CLOSED from the console's revoke test).
 */
class RevokeDuringWritesTest {
  @TempDir Path dir;

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void theHolderHearsRevokedEvenWhenItsWritesBreakTheQueuePair() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      for (int round = 0; round < 12; round++) {
        SecureRdmaClient c = rig.client("acme", "trainer-1");
        RemoteGrant g =
            c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
        ByteBuffer data = ByteBuffer.allocateDirect(256);
        AtomicBoolean stop = new AtomicBoolean();
        Thread writer =
            new Thread(
                () -> {
                  // slots of the grant in turn, paced so that the host has opened a record
                  // before it is written again (a record overwritten while opened is rejected)
                  for (long i = 0; !stop.get(); i++) {
                    long at = (i % 14) * (data.capacity() + SealedLayout.RECORD_OVERHEAD);
                    long r = g.tryWrite(at, data, 0, data.capacity());
                    if (r == WriteResult.BACK_PRESSURED) {
                      c.pollCompletions();
                    } else if (r < 0) {
                      return; // refused: revoked, closed or failed
                    }
                    LockSupport.parkNanos(200_000);
                  }
                },
                "revoke-race-writer-" + round);
        writer.start();
        ChannelRig.await(() -> c.completedPosition() > 20, "writes flowing");
        assertTrue(
            rig.host.revoke(g.id(), "operator"),
            "round "
                + round
                + ": revoke found the grant; ended "
                + g.endedBecause()
                + ", host grants "
                + rig.host.grants()
                + ", id "
                + g.id());
        ChannelRig.await(() -> g.endedBecause() != null, "the grant ended at the client");
        stop.set(true);
        writer.join(10_000);
        assertEquals("REVOKED", g.endedBecause(), "round " + round);
        c.close();
      }
    }
  }
}
