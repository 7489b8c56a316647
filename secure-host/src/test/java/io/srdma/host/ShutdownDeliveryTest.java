package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host that ends live sessions with a reason (its shutdown: ERROR SHUTTING_DOWN, then close) may
 * reset the connection under a client that is writing a request at that moment: the write fails
 * while the host's ERROR already arrived. Every caller, and the session-lost listener, hears the
 * host's reason, never a bare "control connection failed".
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ShutdownDeliveryTest {
  private static final int CLIENTS = 6;
  private static final int ROUNDS = 4;

  @TempDir Path dir;

  private final List<ChannelRig> rigs = new ArrayList<>();

  @AfterEach
  void stop() {
    rigs.forEach(ChannelRig::close);
  }

  @Test
  void shouldTellEveryBusyClientThatTheHostShutDown() throws Exception {
    for (int round = 0; round < ROUNDS; round++) {
      ChannelRig rig = new ChannelRig(dir.resolve("round-" + round));
      rigs.add(rig);
      List<Busy> busy = new ArrayList<>();
      for (int i = 0; i < CLIENTS; i++) {
        busy.add(new Busy(rig.client("acme", "trainer-" + i), "round " + round + " client " + i));
      }
      for (Busy b : busy) {
        assertTrue(b.working.await(30, TimeUnit.SECONDS), b.name + " never got a grant");
      }
      rig.host.close(); // ERROR SHUTTING_DOWN to every session, then the connection closes
      for (Busy b : busy) {
        b.thread.join(30_000);
        ChannelException seen = b.failure.get();
        assertNotNull(seen, b.name + " saw no failure");
        assertEquals("SHUTTING_DOWN", seen.detail(), () -> b.name + ": " + seen.getMessage());
        assertTrue(seen.getMessage().contains("host shutting down"), seen.getMessage());
        // the session's end answers the requests first, then tells the listener
        ChannelRig.await(() -> b.lost.get() != null, b.name + ": a session-lost notice");
        ChannelException lost = b.lost.get();
        assertEquals("SHUTTING_DOWN", lost.detail(), () -> b.name + ": " + lost.getMessage());
      }
    }
  }

  /** One client asking for grants and releasing them as fast as the host answers. */
  private static final class Busy {
    final String name;
    final CountDownLatch working = new CountDownLatch(1);
    final AtomicReference<ChannelException> failure = new AtomicReference<>();
    final AtomicReference<ChannelException> lost = new AtomicReference<>();
    final Thread thread;

    Busy(SecureRdmaClient c, String name) {
      this.name = name;
      c.onSessionLost(lost::set);
      thread =
          new Thread(
              () -> {
                try {
                  while (true) {
                    RemoteGrant g;
                    try {
                      g =
                          c.grant(
                              "kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
                    } catch (ChannelException e) {
                      if (e.reason() != ChannelException.Reason.GRANT_DENIED
                          || !"NOT_PERMITTED".equals(e.detail())) {
                        throw e; // the main thread names it
                      }
                      continue; // denied while the host shuts down; the session's end follows
                    }
                    working.countDown();
                    g.release().toCompletableFuture().get(20, TimeUnit.SECONDS);
                  }
                } catch (ChannelException e) {
                  failure.set(e);
                } catch (java.util.concurrent.ExecutionException e) {
                  if (e.getCause() instanceof ChannelException ce) {
                    failure.set(ce);
                  } else {
                    failure.set(
                        new ChannelException(ChannelException.Reason.PROTOCOL, e.toString()));
                  }
                } catch (Exception e) {
                  failure.set(new ChannelException(ChannelException.Reason.PROTOCOL, e.toString()));
                }
              },
              "busy-" + name.replace(' ', '-'));
      thread.setDaemon(true);
      thread.start();
    }
  }
}
