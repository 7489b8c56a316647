package io.srdma.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.FrameWriter;
import io.srdma.channel.record.SealingKeys;
import io.srdma.channel.record.SessionPair;
import io.srdma.keys.RekeyPolicy;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The client's rekeys: one outstanding at a time, and never unacknowledged for long. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KeyEpochsTest {
  private static final Duration ACK_TIMEOUT = Duration.ofMillis(200);

  private SessionPair pair;
  private ScheduledExecutorService timer;
  private ExecutorService worker;
  private final ByteArrayOutputStream sent = new ByteArrayOutputStream();
  private final CompletableFuture<ChannelException> failed = new CompletableFuture<>();
  private KeyEpochs epochs;

  @BeforeEach
  void setUp() throws Exception {
    pair = new SessionPair();
    timer = Executors.newSingleThreadScheduledExecutor();
    worker = Executors.newSingleThreadExecutor();
    epochs =
        new KeyEpochs(
            pair.initiator,
            new SealingKeys(pair.initiator.sendKeys()),
            RekeyPolicy.fromSystemProperties().withMaxRecords(2),
            new ControlProxy(new FrameWriter(sent)),
            "test",
            timer,
            worker,
            ACK_TIMEOUT);
    epochs.onFailure(failed::complete);
  }

  @AfterEach
  void tearDown() throws Exception {
    timer.shutdownNow();
    worker.shutdownNow();
    epochs.close();
    pair.close();
  }

  @Test
  void shouldEndTheSessionWhenARekeyIsNeverAcknowledged() throws Exception {
    epochs.sealed(2, 100); // due: epoch 1, REKEY sent
    assertEquals(1, epochs.epoch());
    ChannelException e = failed.get(10, TimeUnit.SECONDS);
    assertEquals(ChannelException.Reason.TIMEOUT, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains("REKEY to epoch 1"), e.getMessage());
    assertTrue(e.getMessage().contains("not acknowledged"), e.getMessage());
  }

  @Test
  void shouldRekeyAgainOnceAcknowledgedAndNeverFailThen() throws Exception {
    epochs.sealed(2, 100);
    epochs.acknowledged(1);
    epochs.sealed(2, 100);
    assertEquals(2, epochs.epoch());
    epochs.acknowledged(2);
    // the acknowledged rekeys' deadlines were cancelled: nothing fails after they would have
    // passed; the worker runs the timer's tasks in order, so a task queued behind them proves it
    CompletableFuture<Void> after = new CompletableFuture<>();
    timer.schedule(
        () -> worker.execute(() -> after.complete(null)),
        ACK_TIMEOUT.toMillis() * 2,
        TimeUnit.MILLISECONDS);
    after.get(10, TimeUnit.SECONDS);
    assertFalse(failed.isDone(), "an acknowledged rekey must not end the session");
  }
}
