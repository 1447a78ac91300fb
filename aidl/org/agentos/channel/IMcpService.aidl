// MCP provider entry point returned by the provider's onBind (SPEC CH-03; seed 000 §5.4).
package org.agentos.channel;

import org.agentos.channel.IChannel;

/** Intent action org.agentos.intent.action.PLUGIN. */
interface IMcpService {
    /** Receives AgentOS's receiving end, returns the provider's. */
    IChannel open(IChannel client);
}
