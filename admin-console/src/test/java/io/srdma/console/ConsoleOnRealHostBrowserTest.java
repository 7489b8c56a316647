package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.host.RegionHost;
import io.srdma.keys.DeploymentCa;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.ConsoleUsers;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import io.srdma.testsupport.DevHost;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The console in front of a real {@link RegionHost} (soft provider) while a real tenant client
 * writes: the operator sees the counters move, revokes the client's grant in the browser, and the
 * client's next write fails.
 */
class ConsoleOnRealHostBrowserTest {
  @TempDir Path dir;

  @Test
  @Timeout(180)
  void revokingInTheBrowserStopsARealClient() throws Exception {
    Assumptions.assumeTrue(
        Files.isExecutable(Path.of(ConsoleBrowserTest.CHROMIUM))
            && Files.isExecutable(Path.of(ConsoleBrowserTest.CHROMEDRIVER)),
        "browser test skipped: install the Debian packages chromium chromium-driver (.ci/run does)");
    String policyText = DevHost.samplePolicyText();
    Policy policy = new PolicyLoader().parse("policy.yaml", policyText);
    WebDriver driver = null;
    try (DevHost rig = DevHost.start(dir, o -> o.policy(policy))) {
      RegionHost host = rig.host();
      DeploymentCa ca = rig.ca();
      io.srdma.keys.Credential consoleCertificate =
          ca.issueServer(List.of("localhost", "127.0.0.1"), Duration.ofDays(1));
      try (ConsoleServer console =
              ConsoleServer.start(
                  new ConsoleConfig()
                      .host("127.0.0.1")
                      .port(0)
                      .tls(consoleCertificate, List.of(ca.certificate()))
                      .streamInterval(Duration.ofMillis(200)),
                  new HostConsoleBackend(host, policyText, rig.auditLog().file()),
                  new ConsoleUsers(host::policy),
                  new AuditTrail(rig.auditLog()));
          SecureRdmaClient client =
              SecureRdmaClient.connect(rig.clientOptions("acme", "trainer-1"))) {
        host.registerRegion("acme", "kvcache", 1 << 20);
        RemoteGrant grant =
            client.grant("kvcache", EnumSet.of(Access.WRITE), 0, 1 << 20, Duration.ofMinutes(5));
        AtomicReference<ChannelException> stopped = new AtomicReference<>();
        Thread writer =
            new Thread(
                () -> {
                  ByteBuffer data = ByteBuffer.allocate(16 * 1024);
                  long at = 0;
                  while (stopped.get() == null) {
                    try {
                      grant.writeBlocking(at, data.clear());
                      at = (at + 16_448) % ((1 << 20) - 16_448);
                      Thread.sleep(50);
                    } catch (ChannelException e) {
                      stopped.set(e);
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                },
                "test-writer");
        writer.setDaemon(true);
        writer.start();

        ChromeOptions options = new ChromeOptions();
        options.setBinary(ConsoleBrowserTest.CHROMIUM);
        byte[] spki = consoleCertificate.certificate().getPublicKey().getEncoded();
        options.addArguments(
            "--headless=new",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--disable-gpu",
            "--ignore-certificate-errors-spki-list="
                + Base64.getEncoder()
                    .encodeToString(MessageDigest.getInstance("SHA-256").digest(spki)));
        driver =
            new ChromeDriver(
                new ChromeDriverService.Builder()
                    .usingDriverExecutable(new File(ConsoleBrowserTest.CHROMEDRIVER))
                    .build(),
                options);
        WebDriverWait wait = new WebDriverWait(driver, Duration.ofSeconds(30));
        driver.get(console.url() + "/index.html");
        wait.until(ExpectedConditions.urlContains("/login.html"));
        driver.findElement(By.id("user")).sendKeys("admin");
        driver.findElement(By.id("password")).sendKeys("admin-demo");
        driver.findElement(By.id("login")).click();
        wait.until(ExpectedConditions.urlContains("/index.html"));

        wait.until(ExpectedConditions.not(ExpectedConditions.textToBe(By.id("v-bytesMoved"), "–")));
        String first = driver.findElement(By.id("v-bytesMoved")).getText();
        wait.until(
            ExpectedConditions.not(ExpectedConditions.textToBe(By.id("v-bytesMoved"), first)));
        assertEquals("1", driver.findElement(By.id("v-sessions")).getText());

        driver.get(console.url() + "/grants.html");
        By revoke = By.cssSelector("button.revoke[data-grant='" + grant.id() + "']");
        wait.until(ExpectedConditions.elementToBeClickable(revoke)).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm")));
        driver.findElement(By.id("confirm-ok")).click();
        wait.until(
            ExpectedConditions.textToBePresentInElementLocated(
                By.id("message"), "Revoked " + grant.id()));

        writer.join(30_000);
        // a write already posted when the window was invalidated fails at the RNIC; one posted
        // after the REVOKE notification arrived is refused by the writer's own check
        ChannelException.Reason why = stopped.get().reason();
        assertTrue(
            why == ChannelException.Reason.REVOKED
                || why == ChannelException.Reason.REMOTE_ACCESS_ERROR,
            stopped.get().toString());
        ChannelException again =
            assertThrows(
                ChannelException.class, () -> grant.writeBlocking(0, ByteBuffer.allocate(8)));
        assertEquals(ChannelException.Reason.REVOKED, again.reason(), again.toString());
        assertTrue(host.grants().isEmpty());
        assertTrue(
            rig.audit().contains("\"actor\":\"admin\""),
            "the revocation is audited with the console user as actor");
      }
    } finally {
      if (driver != null) {
        driver.quit();
      }
    }
  }
}
