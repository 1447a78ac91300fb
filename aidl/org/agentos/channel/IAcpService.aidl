// ACP entry point exported by org.agentos.app in process :agent (SPEC CH-02; seed 000 §4.12).
package org.agentos.channel;

import org.agentos.channel.IChannel;

/** Intent action org.agentos.intent.action.ACP. */
interface IAcpService {
    /** Pass the caller's receiving end, get the agent's receiving end back. */
    IChannel open(IChannel client);
}
