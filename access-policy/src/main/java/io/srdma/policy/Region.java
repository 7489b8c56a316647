package io.srdma.policy;

/**
 * A named memory region of a tenant.
 *
 * @param tenant the owning tenant
 * @param name the region name, unique within the tenant
 * @param size the size in bytes, positive
 */
public record Region(String tenant, String name, long size) {}
