package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.file.Path;
import java.security.Principal;
import java.security.cert.X509Certificate;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The key manager that hands a credential to the JDK's TLS without a key store. */
class CredentialKeyManagerTest {
  @TempDir static Path dir;
  static TestPki pki;
  static Credential peer;
  static CredentialKeyManager keys;

  @BeforeAll
  static void createCa() {
    pki = TestPki.create(dir);
    peer = pki.peer("acme", "trainer-1");
    keys =
        new CredentialKeyManager(
            peer.privateKey(), peer.certificate(), pki.trust().caCertificate());
  }

  @Test
  void answersForTheKeysAlgorithmOnly() {
    assertEquals(
        CredentialKeyManager.ALIAS, keys.chooseClientAlias(new String[] {"EC"}, null, null));
    assertEquals(
        CredentialKeyManager.ALIAS,
        keys.chooseEngineClientAlias(new String[] {"RSA", "EC"}, null, null));
    assertEquals(CredentialKeyManager.ALIAS, keys.chooseEngineServerAlias("EC", null, null));
    assertEquals(CredentialKeyManager.ALIAS, keys.chooseServerAlias("EC_EC", null, null));
    assertNull(keys.chooseClientAlias(new String[] {"RSA", "RSASSA-PSS"}, null, null));
    assertNull(keys.chooseEngineServerAlias("RSA", null, null));
    assertNull(keys.chooseServerAlias("EC_RSA", null, null), "issuer signed with RSA asked for");
    assertNull(keys.chooseServerAlias(null, null, null));
    assertNull(keys.getServerAliases("RSA", null));
    assertArrayEquals(new String[] {CredentialKeyManager.ALIAS}, keys.getClientAliases("EC", null));
  }

  @Test
  void honoursThePeersAcceptableIssuers() {
    Principal ca = pki.trust().caCertificate().getSubjectX500Principal();
    Principal other = new X500Principal("CN=another deployment");
    assertEquals(
        CredentialKeyManager.ALIAS,
        keys.chooseEngineClientAlias(new String[] {"EC"}, new Principal[] {other, ca}, null));
    assertNull(keys.chooseEngineClientAlias(new String[] {"EC"}, new Principal[] {other}, null));
    assertNull(keys.chooseEngineServerAlias("EC", new Principal[] {other}, null));
  }

  @Test
  void givesTheChainAndKeyForItsAliasOnly() {
    X509Certificate[] chain = keys.getCertificateChain(CredentialKeyManager.ALIAS);
    assertArrayEquals(
        new X509Certificate[] {peer.certificate(), pki.trust().caCertificate()}, chain);
    chain[0] = null;
    assertNotSame(chain, keys.getCertificateChain(CredentialKeyManager.ALIAS));
    assertEquals(peer.certificate(), keys.getCertificateChain(CredentialKeyManager.ALIAS)[0]);
    assertSame(peer.privateKey(), keys.getPrivateKey(CredentialKeyManager.ALIAS));
    assertNull(keys.getPrivateKey("other"));
    assertNull(keys.getCertificateChain("other"));
  }
}
