package io.srdma.channel.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.TlsBinding;
import org.junit.jupiter.api.Test;

class CapabilitiesTest {
  @Test
  void shouldAnnounceTheExporterExactlyWhenTheRuntimeHasItAndDepthCreditsAndRunsAlways() {
    assertEquals(
        (TlsBinding.exporterAvailable() ? Capabilities.TLS_EXPORTER : 0)
            | Capabilities.RECEIVE_DEPTH
            | Capabilities.RECEIVE_CREDITS
            | Capabilities.RECORD_RUNS,
        Capabilities.local());
    assertEquals(4, Capabilities.RECEIVE_CREDITS);
    assertEquals(8, Capabilities.RECORD_RUNS);
  }

  @Test
  void shouldShareRecordRunsOnlyWithAClientThatAnnouncedThem() {
    // a client of before session 34 announces no RECORD_RUNS: the host opens one record a write
    int older = Capabilities.RECEIVE_DEPTH | Capabilities.RECEIVE_CREDITS;
    assertEquals(0, Capabilities.shared(older) & Capabilities.RECORD_RUNS);
    assertEquals(
        Capabilities.RECORD_RUNS,
        Capabilities.shared(older | Capabilities.RECORD_RUNS) & Capabilities.RECORD_RUNS);
    // and a host that does not choose them leaves the client one record a write
    assertEquals(older, Capabilities.checkAnswer(Capabilities.local(), older));
  }

  @Test
  void shouldShareReceiveCreditsOnlyTogetherWithTheReceiveDepth() {
    int both = Capabilities.RECEIVE_DEPTH | Capabilities.RECEIVE_CREDITS;
    assertEquals(both, Capabilities.shared(both) & both);
    // a client of session 26 announces the depth alone: no credits
    assertEquals(
        Capabilities.RECEIVE_DEPTH, Capabilities.shared(Capabilities.RECEIVE_DEPTH) & both);
    // credits without the depth they count against are dropped
    assertEquals(0, Capabilities.shared(Capabilities.RECEIVE_CREDITS) & both);
    assertEquals(
        0,
        Capabilities.shared(Capabilities.RECEIVE_CREDITS | Capabilities.TLS_EXPORTER)
            & Capabilities.RECEIVE_CREDITS);
  }

  @Test
  void shouldRefuseAHostAnswerWithCreditsButWithoutTheDepth() {
    int announced = Capabilities.local();
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () -> Capabilities.checkAnswer(announced, Capabilities.RECEIVE_CREDITS));
    assertEquals(ProtocolException.Reason.BAD_VALUE, e.reason());
    assertTrue(e.getMessage().contains("RECEIVE_CREDITS"), e.getMessage());
    assertTrue(e.getMessage().contains("RECEIVE_DEPTH"), e.getMessage());
    int both = Capabilities.RECEIVE_DEPTH | Capabilities.RECEIVE_CREDITS;
    assertEquals(both, Capabilities.checkAnswer(announced, both));
    assertEquals(
        Capabilities.RECEIVE_DEPTH,
        Capabilities.checkAnswer(announced, Capabilities.RECEIVE_DEPTH));
  }

  @Test
  void shouldShareTheReceiveDepthOnlyWithAClientThatAnnouncedIt() {
    // a client of before session 26 announces no RECEIVE_DEPTH: its HELLO_ACK keeps two zeros
    assertEquals(0, Capabilities.shared(0) & Capabilities.RECEIVE_DEPTH);
    assertEquals(
        Capabilities.RECEIVE_DEPTH,
        Capabilities.shared(Capabilities.RECEIVE_DEPTH) & Capabilities.RECEIVE_DEPTH);
  }

  @Test
  void shouldUseTheExporterOnlyWhenBothSidesHaveIt() {
    // a Java 17 client (announces nothing) and a Java 25 host: the transcript
    assertEquals(0, Capabilities.shared(0));
    assertEquals(
        TlsBinding.Kind.CERTIFICATE_TRANSCRIPT,
        Capabilities.bindingKind(Capabilities.checkAnswer(0, 0)));
    // unknown bits a newer client announces are not echoed
    assertEquals(Capabilities.local(), Capabilities.shared(0xFFFF_FFFF));
    assertEquals(
        TlsBinding.Kind.EXPORTER,
        Capabilities.bindingKind(
            Capabilities.checkAnswer(Capabilities.TLS_EXPORTER, Capabilities.TLS_EXPORTER)));
  }

  @Test
  void shouldRefuseAHostAnswerBeyondWhatTheClientAnnounced() {
    ProtocolException e =
        assertThrows(
            ProtocolException.class, () -> Capabilities.checkAnswer(0, Capabilities.TLS_EXPORTER));
    assertEquals(ProtocolException.Reason.BAD_VALUE, e.reason());
  }
}
