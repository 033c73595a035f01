package node

import "sync"

// broadcast wakes every waiter at once: a reader takes the channel before
// it reads what the broadcast guards and waits on it afterwards, so no
// change between the read and the wait is missed. The zero value is ready.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

// C is the channel the next notify closes.
func (b *broadcast) C() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// notify wakes the waiters on the channels taken so far.
func (b *broadcast) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}
