package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A peer that reconnects with garbage again and again must not flood the host's log. */
class MalformedConnectionLogTest {
  @Test
  void garbageConnectionsAreCountedAndLoggedAtWarnOnlyOnce() throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger(Responder.class);
    Level before = logger.getLevel();
    logger.setLevel(Level.DEBUG); // other tests in this JVM quiet io.srdma.verbs.soft
    ListAppender<ILoggingEvent> events = new ListAppender<>();
    events.start();
    logger.addAppender(events);
    try (DeviceContext ctx = RdmaProviders.firstDevice("soft").open(new DeviceOptions());
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        CompletionQueue cq = ctx.createCompletionQueue(16);
        QueuePair qp = pd.createQueuePair(QueuePairAttributes.of(cq, 4, 1))) {
      qp.init(AccessFlags.REMOTE_WRITE);
      byte[] a = qp.localInfo().address();
      InetSocketAddress responder =
          new InetSocketAddress(
              InetAddress.getByAddress(new byte[] {a[0], a[1], a[2], a[3]}),
              ((a[4] & 0xFF) << 8) | (a[5] & 0xFF));
      int connections = 25;
      for (int i = 0; i < connections; i++) {
        try (Socket s = new Socket()) {
          s.connect(responder, 5_000);
          s.setSoTimeout(10_000);
          s.getOutputStream().write(new byte[RequestFlyweight.LENGTH]); // not a HELLO
          InputStream in = s.getInputStream();
          while (in.read() >= 0) {
            // the responder drops the connection
          }
        }
      }
      SoftDeviceContext soft = (SoftDeviceContext) ctx;
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (soft.malformedConnections() < connections && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertEquals(connections, soft.malformedConnections(), "every dropped connection counted");
      long warnings = events.list.stream().filter(e -> e.getLevel() == Level.WARN).count();
      assertEquals(1, warnings, "only the first of " + connections + " is logged at WARN");
    } finally {
      logger.detachAppender(events);
      logger.setLevel(before);
    }
  }
}
