package io.srdma.console;

import java.util.Objects;

/**
 * One memory region of a tenant, as the console lists it.
 *
 * @param tenant the tenant owning it
 * @param name the region name from the policy
 * @param size the size the policy declares, in bytes
 * @param registeredBytes bytes actually registered with the device (0 until first used)
 * @param liveGrants live grants on this region now
 */
public record RegionInfo(
    String tenant, String name, long size, long registeredBytes, int liveGrants) {

  /** Checks that the names are present. */
  public RegionInfo {
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(name, "name");
  }
}
