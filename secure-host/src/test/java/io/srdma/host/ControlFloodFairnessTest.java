package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.SecureRdmaClient;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An authenticated peer that floods its control connection with PINGs (and reads its PONGs, so it
 * is never blocked) must not hold a control worker for as long as it keeps sending: the workers
 * also serve every other tenant's frames and TLS certificate checks. With one worker, another
 * tenant's grant is still answered promptly during the flood.
 */
@Timeout(120)
class ControlFloodFairnessTest {
  @TempDir Path dir;

  @Test
  void shouldServeAnotherSessionWhileOnePeerFloodsPings() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir, o -> o.workerThreads(1));
        RawPeer flooder = new RawPeer(rig, "globex", "loader-1")) {
      SecureRdmaClient acme = rig.client("acme", "trainer-1");
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong sent = new AtomicLong();
      Thread reader =
          new Thread(
              () -> {
                byte[] b = new byte[1 << 16];
                try {
                  InputStream in = flooder.socket.getInputStream();
                  while (!stop.get() && in.read(b) >= 0) {
                    // PONGs: read so the flooder's socket never fills
                  }
                } catch (Exception e) {
                  // the host ended the session: the flood is over
                }
              },
              "pong-reader");
      Thread writer =
          new Thread(
              () -> {
                try {
                  for (int i = 1; !stop.get(); i++) {
                    flooder.proxy.ping(i, i);
                    sent.incrementAndGet();
                  }
                } catch (Exception e) {
                  // ended
                }
              },
              "ping-flooder");
      reader.start();
      writer.start();
      try {
        ChannelRig.await(() -> sent.get() > 50_000, "the flood under way");
        long t0 = System.nanoTime();
        acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertTrue(
            took.compareTo(ChannelRig.scaled(Duration.ofSeconds(2))) < 0,
            "another tenant's grant took " + took + " during the flood");
      } finally {
        stop.set(true);
        flooder.socket.close();
        writer.join(5000);
        reader.join(5000);
      }
    }
  }
}
