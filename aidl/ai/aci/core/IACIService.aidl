// SPEC Appendix E.1: the ACI provider's Binder interface (descriptor ai.aci.core.IACIService).
// Method order fixes the transaction codes: call = 1, callAsync = 2, getCapabilities = 3,
// ping = 4.
package ai.aci.core;

import ai.aci.core.ACIRequest;
import ai.aci.core.ACIResponse;
import ai.aci.core.IACICallback;

interface IACIService {
    ACIResponse call(in ACIRequest request);
    void callAsync(in ACIRequest request, in IACICallback callback);
    // One Capability JSON object per entry (E.3).
    String[] getCapabilities();
    boolean ping();
}
