// binder-channel-v1 receiving end (SPEC CH-01; seed 000 §4.12).
// Method order fixes the transaction numbers: send = 1, close = 2, ack = 3.
// Once frozen, methods may only be appended.
package org.agentos.channel;

/** The receiving end of a channel. Each side implements one; they are exchanged at open. */
oneway interface IChannel {
    /** Transaction 1: one complete JSON-RPC 2.0 message (at most 65,536 UTF-16 units). */
    void send(String message);
    /** Transaction 2: close the channel; every send issued before it arrives first. */
    void close(String reason);
    /** Transaction 3: flow-control receipt, cumulative count of messages processed. */
    void ack(long consumed);
}
