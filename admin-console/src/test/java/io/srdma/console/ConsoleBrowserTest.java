package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The UI in real headless Chromium (Debian's {@code chromium} and {@code chromium-driver}; no
 * driver or browser is ever downloaded: both paths are set explicitly). Skips, naming the packages,
 * where they are not installed.
 *
 * <p>TLS: the console's certificate comes from a fresh test CA that Chromium does not trust; the
 * browser is told to accept exactly that certificate's public key ({@code
 * --ignore-certificate-errors-spki-list}), not every certificate.
 *
 * <p>With {@code -Dsrdma.screenshots.dir=DIR} (the module's {@code screenshots} profile sets
 * docs/screenshots) it saves one PNG per page.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ConsoleBrowserTest {
  static final String CHROMIUM = "/usr/bin/chromium";
  static final String CHROMEDRIVER = "/usr/bin/chromedriver";

  @TempDir static Path dir;
  static ConsoleFixture console;
  static WebDriver driver;
  static WebDriverWait wait;
  static ScheduledExecutorService host;
  static java.util.concurrent.ScheduledFuture<?> ticking;

  @BeforeAll
  static void start() throws Exception {
    Assumptions.assumeTrue(
        Files.isExecutable(Path.of(CHROMIUM)) && Files.isExecutable(Path.of(CHROMEDRIVER)),
        "browser test skipped: "
            + CHROMIUM
            + " or "
            + CHROMEDRIVER
            + " missing; install the Debian packages chromium chromium-driver (.ci/run does)");
    console = new ConsoleFixture(dir);
    host = Executors.newSingleThreadScheduledExecutor();
    java.util.Random load = new java.util.Random(7);
    ticking =
        host.scheduleAtFixedRate(
            () ->
                console.backend.advance(
                    128 * 1024 + load.nextInt(256 * 1024), 10 + load.nextInt(60)),
            0,
            100,
            TimeUnit.MILLISECONDS);
    byte[] spki = console.serverCertificate.getPublicKey().getEncoded();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM);
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
        new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER)).build();
    driver = new ChromeDriver(service, options);
    wait = new WebDriverWait(driver, Duration.ofSeconds(20));
  }

  @AfterAll
  static void stop() {
    if (driver != null) {
      driver.quit();
    }
    if (host != null) {
      ticking.cancel(false);
      host.shutdownNow();
    }
    if (console != null) {
      console.close();
    }
  }

  static void screenshot(String name) throws IOException {
    String target = System.getProperty("srdma.screenshots.dir", "");
    if (target.isBlank()) {
      return;
    }
    Path d = Path.of(target);
    Files.createDirectories(d);
    Files.write(
        d.resolve(name + ".png"), ((TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES));
  }

  static void open(String page) {
    driver.get(console.server.url() + page);
  }

  static WebElement id(String id) {
    return wait.until(ExpectedConditions.visibilityOfElementLocated(By.id(id)));
  }

  static void logIn(String user, String password) {
    driver.manage().deleteAllCookies();
    open("/index.html");
    wait.until(ExpectedConditions.urlContains("/login.html"));
    id("user").sendKeys(user);
    id("password").sendKeys(password);
    id("login").click();
    wait.until(ExpectedConditions.urlContains("/index.html"));
    wait.until(ExpectedConditions.textToBe(By.id("user"), user));
  }

  @Test
  void shouldDriveEveryPageAsAdminAndReadOnlyAsAuditor() throws Exception {
    open("/login.html");
    id("user").sendKeys("admin");
    id("password").sendKeys("wrong-password");
    id("login").click();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("message"), "wrong"));
    screenshot("login");

    logIn("admin", ConsoleFixture.ADMIN_PASSWORD);
    shouldShowLiveCounters();
    shouldListSessionsAndRegions();
    shouldRevokeAGrantAfterConfirmation();
    shouldShowPolicyErrorsAtLineAndColumnThenApply();
    shouldShowTheAuditLogWithChainStatus();

    logIn("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    open("/grants.html");
    wait.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("tr[data-grant='g-4']")));
    assertTrue(driver.findElements(By.cssSelector("button.revoke")).isEmpty());
    open("/policy.html");
    wait.until(ExpectedConditions.attributeToBeNotEmpty(id("editor"), "value"));
    assertFalse(driver.findElement(By.id("apply")).isDisplayed());
  }

  void shouldShowLiveCounters() throws Exception {
    WebElement bytes = id("v-bytesMoved");
    wait.until(ExpectedConditions.not(ExpectedConditions.textToBe(By.id("v-bytesMoved"), "–")));
    String first = bytes.getText();
    wait.until(ExpectedConditions.not(ExpectedConditions.textToBe(By.id("v-bytesMoved"), first)));
    String second = bytes.getText();
    wait.until(ExpectedConditions.not(ExpectedConditions.textToBe(By.id("v-bytesMoved"), second)));
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("v-throughput"), "/s"));
    assertEquals("live", id("live-state").getText());
    assertEquals("3", id("v-sessions").getText());
    Thread.sleep(3000); // a few points on the chart for the screenshot
    screenshot("overview");
  }

  void shouldListSessionsAndRegions() throws Exception {
    open("/sessions.html");
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(
            By.id("rows"), "srdma://acme/trainer-1"));
    assertEquals(3, driver.findElements(By.cssSelector("#rows tr[data-session]")).size());
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(
            By.id("peers"), "srdma://globex/loader-1"));
    screenshot("sessions");
    open("/regions.html");
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("rows"), "checkpoints"));
    assertEquals(4, driver.findElements(By.cssSelector("#rows tr")).size());
    screenshot("regions");
  }

  void shouldRevokeAGrantAfterConfirmation() throws Exception {
    open("/grants.html");
    By g3 = By.cssSelector("button.revoke[data-grant='g-3']");
    wait.until(ExpectedConditions.elementToBeClickable(g3)).click();
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm")));
    id("confirm-cancel").click();
    wait.until(ExpectedConditions.invisibilityOfElementLocated(By.id("confirm")));
    assertTrue(console.backend.grants().stream().anyMatch(g -> g.grantId().equals("g-3")));

    new org.openqa.selenium.support.ui.Select(id("f-tenant")).selectByValue("acme");
    id("apply-filter").click();
    wait.until(
        ExpectedConditions.invisibilityOfElementLocated(By.cssSelector("tr[data-grant='g-4']")));
    wait.until(
            ExpectedConditions.elementToBeClickable(
                By.cssSelector("button.revoke[data-grant='g-1']")))
        .click();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("confirm-text"), "g-1"));
    screenshot("grants-revoke");
    id("confirm-ok").click();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("message"), "Revoked g-1"));
    wait.until(
        ExpectedConditions.invisibilityOfElementLocated(By.cssSelector("tr[data-grant='g-1']")));
    assertTrue(console.backend.revokedBy.contains("g-1 by admin"));
    screenshot("grants");
  }

  void shouldShowPolicyErrorsAtLineAndColumnThenApply() throws Exception {
    String sample = FakeBackend.sampleText();
    String brokenText = sample.replace("size: 64MiB", "sise: 64MiB");
    int line = ConsoleApiTest.lineOf(brokenText, "sise: 64MiB");
    Path broken = dir.resolve("broken.yaml");
    Files.writeString(broken, brokenText);
    open("/policy.html");
    wait.until(ExpectedConditions.attributeToBeNotEmpty(id("editor"), "value"));
    driver.findElement(By.id("upload")).sendKeys(broken.toString());
    WebElement error =
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector("#errors li")));
    assertTrue(error.getText().startsWith(line + ":"), error.getText());
    assertTrue(error.getText().contains("sise"), error.getText());
    screenshot("policy-errors");

    String goodText = sample.replace("max-live-grants: 8 ", "max-live-grants: 6 ");
    assertFalse(goodText.equals(sample));
    Path good = dir.resolve("good.yaml");
    Files.writeString(good, goodText);
    driver.findElement(By.id("upload")).sendKeys(good.toString());
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("result"), "Valid"));
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(By.id("diff"), "max-live-grants: 6"));
    id("apply").click();
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm")));
    id("confirm-ok").click();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("message"), "Applied"));
    assertEquals(goodText, console.backend.policyText());
    screenshot("policy");
  }

  void shouldShowTheAuditLogWithChainStatus() throws Exception {
    open("/audit.html");
    wait.until(ExpectedConditions.textToBe(By.id("chain-status"), "Hash chain intact"));
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("rows"), "reload"));
    new org.openqa.selenium.support.ui.Select(id("f-action")).selectByValue("revoke");
    driver.findElement(By.cssSelector("#filters button[type=submit]")).click();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("range"), "1–1 of 1"));
    assertTrue(id("rows").getText().contains("grant=g-1"));
    assertTrue(id("export").getAttribute("href").contains("action=revoke"));
    new org.openqa.selenium.support.ui.Select(id("f-action")).selectByValue("");
    driver.findElement(By.cssSelector("#filters button[type=submit]")).click();
    wait.until(
        ExpectedConditions.not(
            ExpectedConditions.textToBePresentInElementLocated(By.id("range"), "1–1 of 1")));
    List<WebElement> rows = driver.findElements(By.cssSelector("#rows tr"));
    assertTrue(rows.size() > 3);
    screenshot("audit");
  }
}
