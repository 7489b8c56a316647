package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code limits.max-session-lifetime}: optional, a duration, none by default. */
class ServeSessionLifetimeConfigTest {
  private static final String HEAD =
      "version: 1\nlisten: 127.0.0.1:7471\n"
          + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
          + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n";

  @TempDir Path dir;

  private Path write(String name, String text) throws Exception {
    Path f = dir.resolve(name);
    Files.writeString(f, text);
    return f;
  }

  @Test
  void shouldHaveNoLifetimeByDefaultAndReadOne() throws Exception {
    assertNull(ServeConfig.read(write("none.yaml", HEAD)).maxSessionLifetime);
    ServeConfig c =
        ServeConfig.read(write("set.yaml", HEAD + "limits:\n  max-session-lifetime: 12h\n"));
    assertEquals(Duration.ofHours(12), c.maxSessionLifetime);
  }

  @Test
  void shouldRefuseALifetimeThatIsNotADuration() throws Exception {
    ServeConfig.ConfigException e =
        assertThrows(
            ServeConfig.ConfigException.class,
            () ->
                ServeConfig.read(
                    write("bad.yaml", HEAD + "limits:\n  max-session-lifetime: forever\n")));
    assertTrue(
        e.errors().get(0).contains("limits.max-session-lifetime: must be a positive duration"),
        e.errors().toString());
  }
}
