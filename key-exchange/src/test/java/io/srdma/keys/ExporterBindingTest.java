package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TLS exporter binding (Java 25 and later) and its absence on older runtimes. Run under Java 25
 * with {@code -Djvm=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java} to exercise the exporter itself.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExporterBindingTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @TempDir Path tmp;
  private TestPki pki;

  @BeforeEach
  void createCa() {
    pki = TestPki.create(tmp.resolve("ca"));
  }

  private static boolean runtimeHasExporter() {
    return Runtime.version().feature() >= 25;
  }

  @Test
  void shouldOfferTheExporterExactlyWhenTheRuntimeHasIt() {
    assertEquals(runtimeHasExporter(), TlsBinding.exporterAvailable());
  }

  @Test
  void shouldRefuseAnExporterBindingWithoutTheExporter() throws Exception {
    assumeTrue(!TlsBinding.exporterAvailable(), "this runtime has the exporter");
    try (TestTlsServer server = new TestTlsServer(pki.server(pki.peer("host", "h")), p -> {})) {
      AuthenticatedPeer peer = pki.client(pki.peer("acme", "c")).connect(server.address(), TIMEOUT);
      try (var s = peer.socket()) {
        KeyExchangeException e =
            assertThrows(
                KeyExchangeException.class,
                () -> peer.binding(Role.INITIATOR, TlsBinding.Kind.EXPORTER));
        assertEquals(KeyExchangeException.Reason.BAD_ARGUMENT, e.reason());
      }
    }
  }

  @Test
  void shouldExportTheSameSecretAtBothEndsAndANewOneEachConnection() throws Exception {
    assumeTrue(TlsBinding.exporterAvailable(), "needs Java 25 or later (the TLS exporter)");
    BlockingQueue<byte[]> serverSide = new LinkedBlockingQueue<>();
    try (TestTlsServer server =
        new TestTlsServer(
            pki.server(pki.peer("host", "h")),
            p -> {
              try (TlsBinding b = p.binding(Role.RESPONDER, TlsBinding.Kind.EXPORTER)) {
                serverSide.add(b.value().clone());
              }
            })) {
      byte[] first = null;
      for (int i = 0; i < 2; i++) {
        AuthenticatedPeer peer =
            pki.client(pki.peer("acme", "c")).connect(server.address(), TIMEOUT);
        try (var s = peer.socket();
            TlsBinding b = peer.binding(Role.INITIATOR, TlsBinding.Kind.EXPORTER)) {
          assertEquals(TlsBinding.Kind.EXPORTER, b.kind());
          assertArrayEquals(b.value(), serverSide.poll(10, TimeUnit.SECONDS));
          if (first == null) {
            first = b.value().clone();
          } else {
            assertFalse(Arrays.equals(first, b.value()), "each connection exports its own");
          }
        }
      }
    }
  }
}
