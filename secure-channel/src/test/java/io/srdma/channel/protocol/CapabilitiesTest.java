package io.srdma.channel.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.srdma.keys.TlsBinding;
import org.junit.jupiter.api.Test;

class CapabilitiesTest {
  @Test
  void shouldAnnounceTheExporterExactlyWhenTheRuntimeHasItAndTheReceiveDepthAlways() {
    assertEquals(
        (TlsBinding.exporterAvailable() ? Capabilities.TLS_EXPORTER : 0)
            | Capabilities.RECEIVE_DEPTH,
        Capabilities.local());
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
