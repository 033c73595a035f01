package lifecycle

import "k8s.io/apimachinery/pkg/types"

// SetAPIVersionForTest overwrites the last version the status manager
// believes it wrote for a sink UID (scenario F58).
func (m *StatusManager) SetAPIVersionForTest(uid types.UID, v uint64) {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	m.apiVersions[uid] = v
}

// APIVersionForTest returns the last version written for a sink UID.
func (m *StatusManager) APIVersionForTest(uid types.UID) uint64 {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	return m.apiVersions[uid]
}

// LenForTest returns how many pods the cache holds an entry for.
func (c *Cache) LenForTest() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pods)
}
