package main

import "github.com/podhost/podhost/internal/testutil"

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer = testutil.SyncBuffer
