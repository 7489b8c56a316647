package io.srdma.server;

import io.srdma.console.HostConsoleBackend;
import io.srdma.host.RegionHost;
import io.srdma.policy.AuditException;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyWatcher;
import io.srdma.policy.ReloadResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a new policy reaches a running host, from a watched file or from the cluster's etcd: one
 * listener for both, so that both are put in force, audited and shown in the console alike.
 */
final class PolicyReloads {
  private static final Logger LOG = LoggerFactory.getLogger(PolicyReloads.class);

  private PolicyReloads() {}

  /**
   * Watches the policy file. {@link PolicyWatcher} installs a changed, valid file into an
   * authority; this one is a mirror holding no grants (the host owns the real one), and each
   * installed policy goes on to {@link RegionHost#reloadPolicy}, which revokes what the new policy
   * forbids. With a console, its backend then takes the file's text, so that the console shows the
   * policy in force.
   */
  static PolicyWatcher watch(
      Path file, RegionHost host, HostConsoleBackend backend, AuditTrail trail) {
    GrantAuthority mirror = new GrantAuthority(host.policy());
    return PolicyWatcher.start(
        file,
        new PolicyLoader(),
        mirror,
        reloadListener(file.toString(), file, mirror, host, backend, trail));
  }

  /**
   * What a reloaded policy goes through, from a watched file or from the cluster's etcd: put in
   * force on the host (revoking what it forbids, audited), or the mirror reset if that fails; a
   * refused policy is audited and the one in force stays.
   *
   * @param source the policy's origin, for logs
   * @param file the file whose text the console then shows, or null (the cluster hands it over)
   */
  static PolicyWatcher.Listener reloadListener(
      String source,
      Path file,
      GrantAuthority mirror,
      RegionHost host,
      HostConsoleBackend backend,
      AuditTrail trail) {
    return new PolicyWatcher.Listener() {
      @Override
      public void reloaded(ReloadResult result) {
        try {
          ReloadResult r = host.reloadPolicy(result.current(), AuditTrail.SYSTEM);
          LOG.info(
              "policy {} reloaded (sha256 {}); {} live grant(s) revoked",
              source,
              r.current().sha256(),
              r.forbidden().size());
          if (backend != null && file != null) {
            consoleText(file, backend);
          }
        } catch (AuditException e) {
          // in force, and what it forbids revoked, but not every line of it audited
          mirror.reload(host.policy());
          if (backend != null && file != null) {
            consoleText(file, backend);
          }
          LOG.error(
              "policy {} is in force (sha256 {}) and the grants it forbids were revoked, but the"
                  + " audit log failed: {}",
              source,
              host.policy().sha256(),
              e.getMessage());
        } catch (RuntimeException e) {
          mirror.reload(host.policy());
          LOG.error(
              "policy {} could not be put in force; the policy in force is sha256 {}",
              source,
              host.policy().sha256(),
              e);
        }
      }

      @Override
      public void rejected(PolicyException error) {
        try {
          trail.reloadRejected(error, AuditTrail.SYSTEM);
        } catch (RuntimeException e) {
          LOG.error("audit of a refused reload failed", e);
        }
        LOG.warn("policy {} refused, the policy in force stays: {}", source, error.getMessage());
      }
    };
  }

  /**
   * Hands the reloaded file's text to the console; a file changed again meanwhile is skipped, and
   * one that cannot be read again within the loader's bounds (replaced by a device, grown past the
   * limit) is logged and skipped: the console keeps showing the text it had.
   */
  private static void consoleText(Path file, HostConsoleBackend backend) {
    String text;
    try {
      text = policyText(file);
    } catch (PolicyException e) {
      LOG.warn(
          "policy {} reloaded but its text could not be re-read for the console: {}",
          file,
          e.getMessage());
      return;
    }
    if (!backend.policyReloaded(text)) {
      LOG.info(
          "policy {} changed again since the reload; the console shows it after the next", file);
    }
  }

  /**
   * The policy file's text, read within the bounds the watcher's loader reads it ({@link
   * PolicyLoader#read}): never a device or more than its limit, so a file swapped after the reload
   * cannot exhaust the heap.
   *
   * @throws PolicyException naming the file (and the limit) if it cannot be read so
   */
  static String policyText(Path file) {
    return new String(new PolicyLoader().read(file), StandardCharsets.UTF_8);
  }
}
