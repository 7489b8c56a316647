package io.srdma.bench.transport;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The steps of closing a {@link LoadRun} ({@link LoadRun#close} orders them): each bounded, and
 * each reports what it could not do on the run's log instead of throwing, so the next still runs.
 */
final class LoadTeardown {
  /** How long closing waits for the host's sessions to end after their clients closed. */
  static final Duration CLOSE_DRAIN = Duration.ofMinutes(2);

  private LoadTeardown() {}

  /** Closes every client, 8 at a time, waiting up to a minute for each. */
  static void closeClients(LoadSession[] sessions, PrintWriter log) {
    AtomicInteger closers = new AtomicInteger();
    ExecutorService closer =
        Executors.newFixedThreadPool(
            8, r -> new Thread(r, LoadRun.BENCH_THREAD + "close-" + closers.incrementAndGet()));
    List<Future<?>> done = new ArrayList<>();
    for (LoadSession s : sessions) {
      if (s != null) {
        done.add(closer.submit(s.client::close));
      }
    }
    for (Future<?> f : done) {
      try {
        f.get(1, TimeUnit.MINUTES);
      } catch (Exception e) {
        log.println("load: closing a client: " + e);
      }
    }
    closer.shutdownNow();
  }

  /** Waits up to {@link #CLOSE_DRAIN} for the host's sessions to end. */
  static void drainHost(LoadHost host, PrintWriter log) {
    long deadline = System.nanoTime() + CLOSE_DRAIN.toNanos();
    while (host.stats().sessions() > 0 && System.nanoTime() < deadline) {
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    int left = host.stats().sessions();
    if (left > 0) {
      log.println(
          "load: "
              + left
              + " host sessions still open "
              + CLOSE_DRAIN.toSeconds()
              + " s after their clients closed; closing the host anyway");
    }
  }

  /** Deletes the host process's stderr if it stopped cleanly, else says where it is. */
  static void hostStderr(LoadHostProcess hostProcess, PrintWriter log) {
    if (hostProcess.stoppedCleanly()) {
      try {
        Files.deleteIfExists(hostProcess.stderr());
      } catch (IOException e) {
        log.println("load: cannot delete " + hostProcess.stderr() + ": " + e.getMessage());
      }
    } else {
      log.println(
          "load: the host process did not stop cleanly; its stderr: " + hostProcess.stderr());
    }
  }

  /** Deletes {@code dir} and everything in it. */
  static void delete(Path dir, PrintWriter log) {
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      log.println("load: cannot delete " + dir + ": " + e.getMessage());
    }
  }
}
