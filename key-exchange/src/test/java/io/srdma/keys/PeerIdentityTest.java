package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PeerIdentityTest {

  @ParameterizedTest
  @ValueSource(strings = {"a", "acme", "kv-cache-01", "0", "a1-b2"})
  void shouldAcceptStrictNames(String name) {
    PeerIdentity id = PeerIdentity.of(name, name);
    assertEquals(id, PeerIdentity.parse(id.toUri()));
    assertEquals("srdma://" + name + "/" + name, id.toString());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "Acme",
        "-acme",
        "acme-",
        "ac_me",
        "ac.me",
        "ac/me",
        "ac me",
        "a\u00e9",
        "acme\n",
        "0123456789012345678901234567890123456789012345678901234567890123"
      })
  void shouldRefuseAnythingElse(String name) {
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> PeerIdentity.of(name, "peer"));
    assertEquals(KeyExchangeException.Reason.BAD_NAME, e.reason());
    assertFalse(e.getMessage().contains("\n"), "control characters are escaped");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "srdma://acme",
        "srdma://acme/",
        "srdma://acme/a/b",
        "srdma://acme:1/a",
        "srdma://u@acme/a",
        "srdma://acme/a?x",
        "srdma://acme/a#x",
        "SRDMA://acme/a",
        "https://acme/a",
        "srdma:acme/a"
      })
  void shouldRefuseMalformedIdentityUris(String uri) {
    assertEquals(
        KeyExchangeException.Reason.BAD_NAME,
        assertThrows(KeyExchangeException.class, () -> PeerIdentity.parse(uri)).reason());
  }
}
