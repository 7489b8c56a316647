package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
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
 * The Fleet page of a clustered host in real headless Chromium (as {@link ConsoleBrowserTest}): the
 * menu has it, it lists the hosts and the fleet's grants, shows the degraded link, and an admin
 * revokes a grant of another host after confirming. Skips, naming the packages, without Chromium.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ConsoleFleetBrowserTest {
  @TempDir Path dir;

  @Test
  void shouldShowTheFleetAndRevokeAGrantOfAnotherHost() throws Exception {
    Assumptions.assumeTrue(
        Files.isExecutable(Path.of(ConsoleBrowserTest.CHROMIUM))
            && Files.isExecutable(Path.of(ConsoleBrowserTest.CHROMEDRIVER)),
        "browser test skipped: install the Debian packages chromium chromium-driver (.ci/run"
            + " does)");
    ConsoleClusterTest.FakeCluster cluster = new ConsoleClusterTest.FakeCluster();
    try (ConsoleFixture console =
        new ConsoleFixture(dir, new ConsoleConfig(), b -> b.cluster = cluster)) {
      byte[] spki = console.serverCertificate.getPublicKey().getEncoded();
      ChromeOptions options = new ChromeOptions();
      options.setBinary(ConsoleBrowserTest.CHROMIUM);
      options.addArguments(
          "--headless=new",
          "--no-sandbox",
          "--disable-dev-shm-usage",
          "--disable-gpu",
          "--window-size=1280,860",
          "--ignore-certificate-errors-spki-list="
              + Base64.getEncoder()
                  .encodeToString(MessageDigest.getInstance("SHA-256").digest(spki)));
      ChromeDriverService service =
          new ChromeDriverService.Builder()
              .usingDriverExecutable(new File(ConsoleBrowserTest.CHROMEDRIVER))
              .build();
      WebDriver driver = new ChromeDriver(service, options);
      try {
        WebDriverWait wait = new WebDriverWait(driver, Duration.ofSeconds(20));
        driver.get(console.server.url() + "/index.html");
        wait.until(ExpectedConditions.urlContains("/login.html"));
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("user"))).sendKeys("admin");
        driver.findElement(By.id("password")).sendKeys(ConsoleFixture.ADMIN_PASSWORD);
        driver.findElement(By.id("login")).click();
        wait.until(ExpectedConditions.urlContains("/index.html"));
        // the menu of a clustered host has the Fleet page
        wait.until(
                ExpectedConditions.elementToBeClickable(
                    By.cssSelector("nav a[href='/fleet.html']")))
            .click();
        wait.until(ExpectedConditions.urlContains("/fleet.html"));
        wait.until(
            ExpectedConditions.presenceOfElementLocated(
                By.cssSelector("#hosts tr[data-host='h2']")));
        assertEquals(2, driver.findElements(By.cssSelector("#hosts tr[data-host]")).size());
        assertTrue(driver.findElement(By.id("link")).getText().contains("etcd degraded"));
        assertTrue(driver.findElement(By.id("hosts")).getText().contains("(differs)"));
        // h1's refused pushed policies: the count and the last refusal
        String h1 = driver.findElement(By.cssSelector("#hosts tr[data-host='h1']")).getText();
        assertTrue(h1.contains("3 (last: rollback, serial 41,"), h1);
        wait.until(
                ExpectedConditions.elementToBeClickable(
                    By.cssSelector("button.revoke[data-grant='h2/9']")))
            .click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm")));
        driver.findElement(By.id("confirm-ok")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("message"), "Revoked"));
        wait.until(
            ExpectedConditions.numberOfElementsToBe(By.cssSelector("#grants tr[data-grant]"), 2));
        assertFalse(cluster.grants.containsKey("h2/9"));
      } finally {
        driver.quit();
      }
    }
  }
}
