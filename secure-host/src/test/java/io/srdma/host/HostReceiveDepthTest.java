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
 * in the log (never silently), and a client with more records in flight than the host has receives
 * loses none of them: the writes past the receives wait (RNR) until the host reposts, and every
 * record is opened, in order.
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
  void shouldOpenEveryRecordOfAWindowDeeperThanTheHostsReceives() throws Exception {
    int receives = 8;
    int records = 96;
    try (ChannelRig rig = new ChannelRig(dir, o -> o.receiveDepth(receives))) {
      SecureRdmaClient c =
          rig.track(SecureRdmaClient.connect(rig.options("acme", "trainer-1").stagingSlots(128)));
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, records * 64L, Duration.ofMinutes(1));
      WriteBatch batch = new WriteBatch(records);
      ByteBuffer[] payloads = new ByteBuffer[records];
      for (int i = 0; i < records; i++) {
        payloads[i] = ChannelRig.bytes(16, i);
        assertTrue(batch.add(i * 64L, payloads[i], 0, 16));
      }
      // one post list, twelve times the host's receives: the writes past them wait for reposts
      long position = g.tryWriteBatch(batch);
      assertTrue(position > 0, "accepted: " + WriteResult.name(position));
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
