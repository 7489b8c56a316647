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
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/**
 * A device that takes one scatter/gather entry a request (it says so, or it refuses a queue pair
 * with more) cannot gather a record run into one WRITE: its clients write one record a WRITE, and
 * that fallback is counted ({@link SecureRdmaClient#recordRunFallbacks()}) and said once per device
 * context, not silent (docs/protocol.md, "Record runs").
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecordRunFallbackTest {
  private static final int PAYLOAD = 100;
  private static final int SEALED = PAYLOAD + SealedLayout.RECORD_OVERHEAD;
  private static final String SAID = "record runs held to 1 record(s) a WRITE, of the 16";

  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {ScarceSgeProviders.REPORTED, ScarceSgeProviders.REFUSED})
  void shouldWriteOneRecordAWriteCountedAndSaidOnceOnADeviceOfOneSge(String provider)
      throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger("io.srdma.channel.ClientResources");
    Level level = logger.getLevel();
    logger.setLevel(Level.INFO); // whatever the run's configuration says
    ListAppender<ILoggingEvent> events = new ListAppender<>();
    events.start();
    logger.addAppender(events);
    try (ChannelRig rig = new ChannelRig(dir)) {
      long before = SecureRdmaClient.recordRunFallbacks();
      SecureRdmaClient one =
          rig.track(SecureRdmaClient.connect(rig.options("acme", "trainer-1").provider(provider)));
      SecureRdmaClient two =
          rig.track(SecureRdmaClient.connect(rig.options("acme", "trainer-2").provider(provider)));
      assertEquals(before + 2, SecureRdmaClient.recordRunFallbacks(), "each session counted");

      int n = 8;
      int delivered = 0;
      for (SecureRdmaClient c : List.of(one, two)) {
        RemoteGrant g =
            c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 65536, Duration.ofMinutes(1));
        byte[][] payloads = new byte[n][];
        WriteBatch batch = new WriteBatch(n);
        for (int k = 0; k < n; k++) {
          payloads[k] = ChannelRig.bytes(PAYLOAD, k + delivered).array();
          // end to end in the grant: a run where the device could gather it
          assertTrue(batch.add((long) k * SEALED, ByteBuffer.wrap(payloads[k]), 0, PAYLOAD));
        }
        long notifications = rig.host.stats().writeNotifications();
        assertTrue(g.tryWriteBatch(batch) > 0, "batch accepted");
        int expected = delivered + n;
        ChannelRig.await(() -> rig.acmeRecords.size() == expected, "every record delivered");
        for (int k = 0; k < n; k++) {
          assertArrayEquals(payloads[k], rig.acmeRecords.get(delivered + k), "record " + k);
        }
        assertEquals(
            n, rig.host.stats().writeNotifications() - notifications, "one record a WRITE");
        delivered = expected;
        assertEquals(null, c.dataPathFailure());
      }
      assertEquals(0, rig.host.stats().recordsRejected());
    } finally {
      logger.detachAppender(events);
      logger.setLevel(level);
    }
    List<ILoggingEvent> said =
        events.list.stream()
            .filter(e -> e.getLevel() == Level.INFO)
            .filter(e -> e.getFormattedMessage().contains(SAID))
            .toList();
    assertEquals(1, said.size(), "said once for the device context, not per client: " + said);
  }

  @Test
  void shouldCountNothingWhereTheDeviceTakesARun() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      long before = SecureRdmaClient.recordRunFallbacks();
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      assertTrue(c.isOpen());
      assertEquals(before, SecureRdmaClient.recordRunFallbacks());
    }
  }
}
