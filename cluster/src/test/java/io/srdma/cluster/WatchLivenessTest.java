package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.Watch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The rules that decide a watch is alive, driven by hand (no etcd; {@link WatchSilenceTest} runs
 * them on a real one): asked once per period, an answer at or past the revision read proves it, a
 * slow answer or a member catching up within the deadline is no failure, and a question unanswered
 * (or answered only from behind) at the deadline loses the watch once.
 */
class WatchLivenessTest {
  private static final Duration PERIOD = Duration.ofMillis(100);
  private static final Duration DEADLINE = Duration.ofMillis(1000);
  private static final long P = PERIOD.toNanos();

  private final WatchLiveness liveness = new WatchLiveness(PERIOD, DEADLINE);
  private final List<ClusterException> lost = new ArrayList<>();

  /** A watcher that counts the progress requests sent on it. */
  private static final class Asked implements Watch.Watcher {
    int requests;

    @Override
    public void close() {}

    @Override
    public boolean isClosed() {
      return false;
    }

    @Override
    public void requestProgress() {
      requests++;
    }
  }

  private WatchLiveness.Proof open(String what, Asked w) {
    WatchLiveness.Proof p = liveness.proof(what, lost::add);
    p.start(w);
    return p;
  }

  @Test
  void shouldAskOncePerPeriodAndKeepAWatchThatAnswers() {
    Asked w = new Asked();
    WatchLiveness.Proof p = open("watching x", w);
    long t0 = System.nanoTime();
    for (int i = 1; i <= 20; i++) {
      long now = t0 + i * P;
      liveness.check(now, 10 + i);
      liveness.check(now + P / 2, 10 + i); // probes in between ask nothing
      assertEquals(i, w.requests, "one request per period");
      p.heard(10 + i);
    }
    liveness.check(t0 + 100 * P, 30);
    assertTrue(lost.isEmpty(), lost.toString());
    assertEquals(0, liveness.silent());
    assertEquals(20, liveness.answered());
    assertNull(liveness.unproven());
  }

  @Test
  void shouldNotLoseAWatchThatAnswersLateOrCatchesUpWithinTheDeadline() {
    Asked w = new Asked();
    WatchLiveness.Proof p = open("watching x", w);
    long t0 = System.nanoTime();
    liveness.check(t0 + P, 50); // asked; the host read revision 50
    p.heard(40); // a member still catching up
    liveness.check(t0 + 5 * P, 60); // asked again, for revision 50 still
    p.heard(45);
    liveness.check(t0 + 9 * P, 70);
    assertTrue(lost.isEmpty(), lost.toString());
    p.heard(50); // just before the deadline
    assertEquals(3, w.requests, "asked again each period while not answered");
    liveness.check(t0 + P + DEADLINE.toNanos(), 70);
    assertTrue(lost.isEmpty(), lost.toString());
    assertEquals(1, liveness.answered());
  }

  @Test
  void shouldLoseAWatchThatDoesNotAnswerWithinTheDeadlineOnce() {
    Asked w = new Asked();
    open("watching the revocation list", w);
    long t0 = System.nanoTime();
    liveness.check(t0 + P, 7);
    liveness.check(t0 + P + DEADLINE.toNanos() - 1, 7);
    assertTrue(lost.isEmpty(), lost.toString());
    liveness.check(t0 + P + DEADLINE.toNanos(), 7);
    liveness.check(t0 + P + 2 * DEADLINE.toNanos(), 7);
    assertEquals(1, lost.size(), "lost once");
    assertEquals(ClusterException.Reason.UNAVAILABLE, lost.get(0).reason());
    assertTrue(lost.get(0).getMessage().contains("did not answer a progress request"));
    assertEquals(1, liveness.silent());
    String unproven = liveness.unproven();
    assertTrue(unproven != null && unproven.contains("watching the revocation list"), unproven);
  }

  @Test
  void shouldLoseAWatchThatAnswersOnlyFromBehindWhatTheHostRead() {
    Asked w = new Asked();
    WatchLiveness.Proof p = open("watching x", w);
    long t0 = System.nanoTime();
    liveness.check(t0 + P, 20);
    for (int i = 2; i <= 10; i++) {
      p.heard(15); // a member cut off, answering from its frozen revision
      liveness.check(t0 + i * P, 20 + i);
    }
    p.heard(15);
    liveness.check(t0 + P + DEADLINE.toNanos(), 40);
    assertEquals(1, lost.size());
    String why = lost.get(0).getMessage();
    assertTrue(why.contains("revision 15") && why.contains("revision 20"), why);
  }

  @Test
  void shouldStayUnprovenUntilTheFollowersNewWatchAnswers() {
    Asked old = new Asked();
    Asked other = new Asked();
    open("watching x", old);
    WatchLiveness.Proof o = open("watching y", other);
    long t0 = System.nanoTime();
    liveness.check(t0 + P, 5);
    o.heard(5);
    long found = t0 + P + DEADLINE.toNanos();
    liveness.check(found, 5);
    assertEquals(1, lost.size());
    // the other follower's watch answering does not prove x's
    liveness.check(found + P, 5);
    o.heard(5);
    liveness.check(found + 2 * P, 5);
    assertTrue(liveness.unproven() != null);
    Asked fresh = new Asked();
    WatchLiveness.Proof f = open("watching x", fresh);
    long t1 = Math.max(System.nanoTime(), found + 2 * P);
    liveness.check(t1 + P, 6);
    assertTrue(liveness.unproven() != null, "opened but not proven");
    f.heard(6);
    liveness.check(t1 + P + 1, 6);
    assertNull(liveness.unproven());
    assertEquals(1, liveness.silent());
  }

  @Test
  void shouldAskNothingOfAStoppedWatch() {
    Asked w = new Asked();
    WatchLiveness.Proof p = open("watching x", w);
    p.stop();
    long t0 = System.nanoTime();
    liveness.check(t0 + P, 1);
    liveness.check(t0 + P + 2 * DEADLINE.toNanos(), 1);
    assertEquals(0, w.requests);
    assertTrue(lost.isEmpty());
  }
}
