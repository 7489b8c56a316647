/**
 * The {@code soft} provider: a user-space RNIC over TCP, like rdma-core's rxe but in Java. Each
 * open device runs a responder on a TCP port; a connected RC QP uses one TCP connection per
 * direction (requester → peer's responder). The responder executes one-sided operations on
 * registered memory and performs the RNIC's access checks; see {@link
 * io.srdma.verbs.soft.SoftProvider}.
 */
package io.srdma.verbs.soft;
