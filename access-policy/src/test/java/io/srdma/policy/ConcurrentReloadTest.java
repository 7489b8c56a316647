package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class ConcurrentReloadTest {
  private static final PolicyLoader LOADER = new PolicyLoader();

  @Test
  @Timeout(60)
  void shouldSeeTheOldOrTheNewPolicyNeverAMixDuringReloads() throws Exception {
    // A: the role may write kv and read feat; B: the role may read kv only, with another max TTL
    Policy a = LOADER.parse("a", PolicyYaml.twoTenants(List.of("region:write:kv"), "10m"));
    Policy b = LOADER.parse("b", PolicyYaml.twoTenants(List.of("region:read:kv"), "20m"));
    GrantAuthority authority = new GrantAuthority(a);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger seenA = new AtomicInteger();
    AtomicInteger seenB = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(4, r -> new Thread(r, "decider"));
    try {
      CountDownLatch started = new CountDownLatch(4);
      List<Future<?>> deciders = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        deciders.add(
            pool.submit(
                () -> {
                  started.countDown();
                  while (!stop.get()) {
                    Decision w =
                        authority.decide(
                            "srdma://acme/p",
                            "acme",
                            "kv",
                            EnumSet.of(Operation.WRITE),
                            0,
                            1,
                            Duration.ofHours(1));
                    if (w.policySha256().equals(a.sha256())) {
                      seenA.incrementAndGet();
                      assertTrue(w.allowed(), w.explain());
                      assertEquals(Duration.ofMinutes(10), w.effectiveTtl());
                    } else {
                      seenB.incrementAndGet();
                      assertEquals(b.sha256(), w.policySha256());
                      assertEquals(DecisionReason.NOT_PERMITTED, w.reason(), w.explain());
                    }
                  }
                  return null;
                }));
      }
      assertTrue(started.await(10, TimeUnit.SECONDS));
      // at least 2,000 swaps, and on until the deciders have seen both policies often
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      for (int i = 0;
          i < 2_000
              || ((seenA.get() < 1_000 || seenB.get() < 1_000) && System.nanoTime() < deadline);
          i++) {
        authority.reload(i % 2 == 0 ? b : a);
        if (i % 64 == 0) {
          TimeUnit.MICROSECONDS.sleep(50); // let deciders run on a small machine
        }
      }
      stop.set(true);
      for (Future<?> f : deciders) {
        f.get(20, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
    assertTrue(seenA.get() > 0 && seenB.get() > 0, seenA + " / " + seenB);
  }

  @Test
  @Timeout(60)
  void shouldNeverIssueMoreThanTheQuotaUnderContention() throws Exception {
    GrantAuthority authority = new GrantAuthority(LOADER.loadSample());
    ExecutorService pool = Executors.newFixedThreadPool(8, r -> new Thread(r, "issuer"));
    AtomicInteger allowed = new AtomicInteger();
    try {
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < 64; t++) {
        String id = "g" + t;
        fs.add(
            pool.submit(
                () -> {
                  Decision d =
                      authority.issue(
                          id,
                          "srdma://acme/checkpointer",
                          "acme",
                          "checkpoints",
                          EnumSet.of(Operation.WRITE),
                          0,
                          1,
                          Duration.ofMinutes(1));
                  if (d.allowed()) {
                    allowed.incrementAndGet();
                  }
                }));
      }
      for (Future<?> f : fs) {
        f.get(20, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
    assertEquals(2, allowed.get());
    assertEquals(2, authority.liveGrants().size());
  }
}
