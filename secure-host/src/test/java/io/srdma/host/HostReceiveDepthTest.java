package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteBatch;
import io.srdma.channel.WriteResult;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The receives a host keeps posted per session: a depth lowered to fit the device's queues is said
 * in the log (never silently), and the host tells each client its depth in HELLO_ACK and returns
 * receive credits, so a client with more staging slots keeps no more records posted beyond those
 * the host reposted receives for than that (one past them would wait for a receive: on an RNIC for
 * the RNR NAK timer) and loses none: every record is opened, in order.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostReceiveDepthTest {
  private static final String LOWERED = "lowered to";

  @TempDir Path dir;

  @Test
  void shouldWarnWhenTheReceiveDepthIsLoweredToFitTheSessions() throws Exception {
    // 1,024 sessions (the default) x 2,048 receives do not fit 2^18 completions
    List<ILoggingEvent> warnings = startLogging(o -> o.receiveDepth(2048));
    assertEquals(1, warnings.size(), "one warning: " + warnings);
    String line = warnings.get(0).getFormattedMessage();
    assertTrue(line.contains("receiveDepth 2048 " + LOWERED), line);
    assertTrue(line.contains("1024 sessions"), "names the other limit: " + line);
  }

  @Test
  void shouldStaySilentWhenTheReceiveDepthFits() throws Exception {
    assertEquals(List.of(), startLogging(o -> {}), "the defaults fit");
    assertEquals(
        List.of(), startLogging(o -> o.receiveDepth(2048).maxSessions(16)), "2,048 x 16 fit");
  }

  @Test
  void shouldKeepNoMoreRecordsInFlightThanTheHostHasReceivesAndLoseNone() throws Exception {
    int receives = 8;
    int records = 96;
    try (ChannelRig rig = new ChannelRig(dir, o -> o.receiveDepth(receives))) {
      // the host says its 8 receives in HELLO_ACK: the client's 128 staging slots do not count
      SecureRdmaClient c =
          rig.track(SecureRdmaClient.connect(rig.options("acme", "trainer-1").stagingSlots(128)));
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, records * 64L, Duration.ofMinutes(1));
      ByteBuffer[] payloads = new ByteBuffer[records];
      WriteBatch all = new WriteBatch(records);
      for (int i = 0; i < records; i++) {
        payloads[i] = ChannelRig.bytes(16, i);
        assertTrue(all.add(i * 64L, payloads[i], 0, 16));
      }
      long before = c.postedPosition();
      assertEquals(
          WriteResult.INVALID_ARGUMENT,
          g.tryWriteBatch(all),
          "a post list of more records than the host's receives can never go: refused whole");
      assertEquals(before, c.postedPosition(), "nothing posted");
      WriteBatch batch = new WriteBatch(receives);
      long deadline = System.nanoTime() + ChannelRig.scaled(Duration.ofSeconds(20)).toNanos();
      for (int first = 0; first < records; ) {
        batch.clear();
        int n = Math.min(receives / 2, records - first);
        for (int k = 0; k < n; k++) {
          batch.add((first + k) * 64L, payloads[first + k], 0, 16);
        }
        long r = g.tryWriteBatch(batch);
        if (r == WriteResult.BACK_PRESSURED) {
          assertTrue(System.nanoTime() < deadline, "no room within 20 s");
          c.pollCompletions();
          continue;
        }
        assertTrue(r > 0, "accepted: " + WriteResult.name(r));
        // the host's credits count its reposts, each after the record's listener: never more
        // records posted beyond those opened than the host has receives
        long ahead = c.postedPosition() - rig.acmeRecords.size();
        assertTrue(ahead <= receives, ahead + " records beyond those opened, " + receives);
        first += n;
      }
      long position = c.postedPosition();
      ChannelRig.await(() -> c.completedPosition() >= position, "every write completed");
      ChannelRig.await(() -> rig.acmeRecords.size() == records, "every record opened");
      for (int i = 0; i < records; i++) {
        assertArrayEquals(payloads[i].array(), rig.acmeRecords.get(i), "record " + i);
      }
      assertEquals(null, c.dataPathFailure(), "the data path stayed up");
    }
  }

  /** Starts and closes a host tuned by {@code tune}; its receive-depth warnings. */
  private List<ILoggingEvent> startLogging(Consumer<HostOptions> tune) throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger(RegionHost.class);
    ListAppender<ILoggingEvent> events = new ListAppender<>();
    events.start();
    logger.addAppender(events);
    try (ChannelRig rig = new ChannelRig(dir.resolve("h" + System.nanoTime()), tune)) {
      assertTrue(rig.host.address() != null);
    } finally {
      logger.detachAppender(events);
    }
    return events.list.stream()
        .filter(e -> e.getLevel() == Level.WARN)
        .filter(e -> e.getFormattedMessage().contains(LOWERED))
        .toList();
  }
}
