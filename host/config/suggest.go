package config

import "strings"

// suggest returns the known name closest to an unknown one, or "" if none is
// close enough to be a likely misspelling.
func suggest(unknown string, known []string) string {
	u := strings.ToLower(unknown)
	best, bestDist := "", -1
	for _, k := range known {
		d := editDistance(u, strings.ToLower(k))
		limit := 2
		if len(k) <= 4 {
			limit = 1
		}
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, counting bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
