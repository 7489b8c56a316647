package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.bench.transport.LoadFootprint.Verdict;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The per-side attribution and arithmetic of a load run's figures (no run, no timing). */
class LoadFootprintTest {
  // host control listener :9000 (0x2328), host soft responder :9001 (0x2329), a client's soft
  // responder :40000 (0x9C40); a listener open before the host :8080 (0x1F90)
  private static final List<String> TCP =
      List.of(
          "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid "
              + " timeout inode",
          "   0: 0100007F:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 101 1",
          "   1: 0100007F:2329 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 102 1",
          "   2: 0100007F:9C40 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 103 1",
          "   3: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 104 1",
          // a client's TLS socket to the host, and the host's accepted end
          "   4: 0100007F:C350 0100007F:2328 01 00000000:00000000 00:00000000 00000000 0 0 105 1",
          "   5: 0100007F:2328 0100007F:C350 01 00000000:00000000 00:00000000 00000000 0 0 106 1",
          // the client's QP to the host's responder, and the host's accepted end
          "   6: 0100007F:C351 0100007F:2329 01 00000000:00000000 00:00000000 00000000 0 0 107 1",
          "   7: 0100007F:2329 0100007F:C351 01 00000000:00000000 00:00000000 00000000 0 0 108 1",
          // the host's QP to the client's responder, and the client's accepted end
          "   8: 0100007F:C352 0100007F:9C40 01 00000000:00000000 00:00000000 00000000 0 0 109 1",
          "   9: 0100007F:9C40 0100007F:C352 01 00000000:00000000 00:00000000 00000000 0 0 110 1",
          // another process's socket: not among our descriptors
          "  10: 0100007F:C353 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 0 0 111 1");

  @Test
  void shouldAttributeSocketsByListeningPort() {
    Map<Long, FdCensus.Tcp> tcp = FdCensus.parseTcp(TCP, new HashMap<>());
    assertEquals(11, tcp.size());
    assertEquals(new FdCensus.Tcp(9000, 0, true), tcp.get(101L));
    assertEquals(new FdCensus.Tcp(50000, 9000, false), tcp.get(105L));
    List<String> fds =
        List.of(
            "/dev/null",
            "anon_inode:[eventpoll]",
            "pipe:[7]",
            "socket:[101]",
            "socket:[102]",
            "socket:[103]",
            "socket:[104]",
            "socket:[105]",
            "socket:[106]",
            "socket:[107]",
            "socket:[108]",
            "socket:[109]",
            "socket:[110]",
            "socket:[999]"); // a socket in neither table (unix, or closed meanwhile)
    assertEquals(Set.of(9000, 9001, 40000, 8080), FdCensus.listeningPorts(fds, tcp));
    FdCensus c = FdCensus.classify(fds, tcp, Set.of(9000, 9001), Set.of(8080));
    // host: its 2 listeners, the 2 ends it accepted, the QP it connected to the client
    // client: its listener, its TLS socket, its QP to the host, the end it accepted
    // other: /dev/null, epoll, pipe, the listener of neither, the unknown socket
    assertEquals(new FdCensus(5, 4, 5), c);
    assertEquals(14, c.total());
  }

  @Test
  void shouldReadSocketInodesAndTheDescriptorLimit() {
    assertEquals(42, FdCensus.socketInode("socket:[42]"));
    assertEquals(-1, FdCensus.socketInode("pipe:[42]"));
    assertEquals(-1, FdCensus.socketInode("socket:[x]"));
    assertEquals(
        20000,
        LoadSample.fdLimit(
            List.of(
                "Limit                     Soft Limit           Hard Limit           Units",
                "Max processes             96551                96551                processes",
                "Max open files            20000                20000                files")));
    assertEquals(-1, LoadSample.fdLimit(List.of("Max open files  unlimited  unlimited  files")));
  }

  @Test
  void shouldAttributeThreadsByWhenAndName() {
    List<ThreadCensus.Live> live =
        List.of(
            new ThreadCensus.Live(1, "main"),
            new ThreadCensus.Live(2, "srdma-load-driver-1"),
            new ThreadCensus.Live(3, "srdma-soft-accept-soft0-9001"),
            new ThreadCensus.Live(4, "srdma-host-1-worker-3"),
            new ThreadCensus.Live(5, "srdma-client-12-control"),
            new ThreadCensus.Live(6, "srdma-client-13-control"),
            new ThreadCensus.Live(7, "ForkJoinPool.commonPool-worker-1"));
    ThreadCensus c = ThreadCensus.classify(live, Set.of(1L), Set.of(3L));
    assertEquals(2, c.host());
    assertEquals(3, c.client());
    assertEquals(2, c.bench());
    assertEquals(
        Map.of("srdma-client-N-control", 2, "ForkJoinPool.commonPool-worker-N", 1),
        c.clientByName());
    assertTrue(c.topClientNames(1).startsWith("srdma-client-N-control ×2"), c.topClientNames(1));
  }

  @Test
  void shouldComputePerSessionFiguresAndVerdicts() {
    LoadSample idle = new LoadSample(100L << 20, 10L << 20, 200, 50);
    // 1,000 sessions: +60 KiB heap and +20 KiB direct each (both sides)
    LoadSample loaded =
        new LoadSample((100L << 20) + 60 * 1024 * 1000, (10L << 20) + 20 * 1024 * 1000, 9200, 3050);
    ThreadCensus threadsIdle = new ThreadCensus(16, 0, 30, Map.of());
    ThreadCensus threadsLoaded = new ThreadCensus(16, 3000, 34, Map.of());
    ThreadCensus threadsEnd = new ThreadCensus(17, 3000, 34, Map.of());
    FdCensus fdsIdle = new FdCensus(2, 0, 60);
    // host +2,000 sockets (2 per session); client +5,000 sockets and +2,000 unattributed (7)
    FdCensus fdsLoaded = new FdCensus(2002, 5000, 2060);
    LoadFootprint f =
        new LoadFootprint(
            1000,
            idle,
            loaded,
            threadsIdle,
            threadsLoaded,
            threadsEnd,
            fdsIdle,
            fdsLoaded,
            20 * 1024,
            2_000_000_000L, // 500 sessions/s
            400,
            1000,
            20000);
    assertEquals(17, f.hostThreads());
    assertEquals(3000, f.clientThreads());
    assertEquals(2.0, f.hostFdsPerSession(), 1e-9);
    assertEquals(7.0, f.clientFdsPerSession(), 1e-9);
    assertEquals(80 * 1024, f.bytesPerSession(), 1e-6);
    assertEquals(60 * 1024, f.hostBytesPerSessionBound(), 1e-6);
    assertEquals(500, f.setupPerSecond(), 1e-9);
    assertEquals(1.25, f.setupRatio(), 1e-9);
    List<Verdict> v = f.targets().stream().map(LoadFootprint.Target::verdict).toList();
    assertEquals(
        List.of(Verdict.PASS, Verdict.FAIL, Verdict.PASS, Verdict.FAIL, Verdict.PASS, Verdict.PASS),
        v);

    // above the memory target the bound proves nothing; below the floor's 0.8x the rate fails
    LoadFootprint g =
        new LoadFootprint(
            1000,
            idle,
            new LoadSample(300L << 20, 30L << 20, 9200, 3050),
            threadsIdle,
            threadsLoaded,
            threadsEnd,
            fdsIdle,
            fdsLoaded,
            20 * 1024,
            4_000_000_000L, // 250 sessions/s
            400,
            1000,
            20000);
    assertEquals(Verdict.NOT_SHOWN, g.targets().get(4).verdict());
    assertEquals(Verdict.FAIL, g.targets().get(5).verdict());
  }
}
