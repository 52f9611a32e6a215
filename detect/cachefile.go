package detect

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// cacheMagic starts a cache file; a file that starts otherwise (another
// version) is ignored.
const cacheMagic = "rootkeeper scan cache 1\n"

var errCacheFile = errors.New("not a scan cache file")

// Save writes c to file with write (the caller's: app/atomicfile's, which
// replaces a file at once and durably; detect writes no files of its own),
// for LoadCache to read in a later run; it writes nothing when file already
// holds c (c was loaded from it or saved to it, and no scan changed it
// since). It waits for a scan using c to end.
func (c *Cache) Save(file string, write func(file string, data []byte) error) error {
	c.mu.Lock()
	if file == c.file && !c.dirty {
		c.mu.Unlock()
		return nil
	}
	var b []byte
	b = append(b, cacheMagic...)
	b = appendString(b, c.key)
	b = binary.AppendUvarint(b, uint64(len(c.roots)))
	for p, n := range c.roots {
		b = appendString(b, p)
		b = n.appendTo(b)
	}
	c.file, c.dirty = file, false
	c.mu.Unlock()
	if err := write(file, b); err != nil {
		c.mu.Lock()
		c.dirty = true
		c.mu.Unlock()
		return err
	}
	return nil
}

// LoadCache returns the cache Save wrote to file, or an empty cache when the
// file is missing, unreadable or not a cache (what it holds is checked
// against the disk before it is trusted anyway).
func LoadCache(file string) *Cache {
	c := NewCache()
	data, err := os.ReadFile(file)
	if err != nil {
		return c
	}
	r := &cacheReader{r: bytes.NewReader(data)}
	if c.key, c.roots, err = r.cache(); err != nil {
		return NewCache()
	}
	c.file = file
	return c
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBool(bits byte, bit int, v bool) byte {
	if v {
		bits |= 1 << bit
	}
	return bits
}

// appendTo writes n and what is below it: its stamp, what more it holds, its
// sub-folders' names together (so that loading slices them from one string)
// and then each sub-folder.
func (n *cnode) appendTo(b []byte) []byte {
	b = binary.AppendUvarint(b, n.st.ino)
	b = binary.AppendVarint(b, n.st.mtime)
	b = binary.AppendVarint(b, n.st.ctime)
	if m := n.more; m != nil {
		var bits byte = 1
		bits = appendBool(bits, 1, m.gitLink)
		bits = appendBool(bits, 2, m.head)
		bits = appendBool(bits, 3, m.objects)
		bits = appendBool(bits, 4, m.refs)
		b = append(b, bits, byte(m.dotGit))
		b = binary.AppendUvarint(b, uint64(len(m.markers)))
		for _, s := range m.markers {
			b = appendString(b, s)
		}
		b = binary.AppendUvarint(b, uint64(len(m.wspaces)))
		for _, s := range m.wspaces {
			b = appendString(b, s)
		}
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(n.kids)))
	for i := range n.kids {
		b = appendString(b, n.kids[i].name)
	}
	for i := range n.kids {
		b = n.kids[i].appendTo(b)
	}
	return b
}

type cacheReader struct{ r *bytes.Reader }

func (r *cacheReader) cache() (string, map[string]*cnode, error) {
	magic := make([]byte, len(cacheMagic))
	if _, err := io.ReadFull(r.r, magic); err != nil || string(magic) != cacheMagic {
		return "", nil, errCacheFile
	}
	key, err := r.string()
	if err != nil {
		return "", nil, err
	}
	nroots, err := r.count()
	if err != nil {
		return "", nil, err
	}
	roots := make(map[string]*cnode, nroots)
	for range nroots {
		p, err := r.string()
		if err != nil {
			return "", nil, err
		}
		n := &cnode{}
		if err := r.node(n, 0); err != nil {
			return "", nil, err
		}
		roots[p] = n
	}
	if _, err := r.r.ReadByte(); err == nil {
		return "", nil, errCacheFile // trailing bytes
	}
	return key, roots, nil
}

func (r *cacheReader) count() (int, error) {
	// No count exceeds the bytes left, so a corrupt file cannot make
	// LoadCache allocate much more than its size.
	v, err := binary.ReadUvarint(r.r)
	if err != nil || v > uint64(r.r.Len()) {
		return 0, errCacheFile
	}
	return int(v), nil
}

func (r *cacheReader) string() (string, error) {
	n, err := r.count()
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return "", errCacheFile
	}
	return string(b), nil
}

// maxCacheDepth bounds the nesting a corrupt file could claim.
const maxCacheDepth = 4096

func (r *cacheReader) node(n *cnode, depth int) error {
	if depth > maxCacheDepth {
		return errCacheFile
	}
	ino, err1 := binary.ReadUvarint(r.r)
	mtime, err2 := binary.ReadVarint(r.r)
	ctime, err3 := binary.ReadVarint(r.r)
	bits, err4 := r.r.ReadByte()
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return errCacheFile
	}
	n.st = stamp{ino: ino, mtime: mtime, ctime: ctime}
	if bits&1 != 0 {
		t, err := r.r.ReadByte()
		if err != nil || entryType(t) > typeOther {
			return errCacheFile
		}
		m := &cmore{dotGit: entryType(t), gitLink: bits&2 != 0, head: bits&4 != 0, objects: bits&8 != 0, refs: bits&16 != 0}
		for _, list := range []*[]string{&m.markers, &m.wspaces} {
			k, err := r.count()
			if err != nil {
				return err
			}
			for range k {
				s, err := r.string()
				if err != nil {
					return err
				}
				if interned, ok := markerNames[s]; ok {
					s = interned
				}
				*list = append(*list, s)
			}
		}
		n.more = m
	}
	k, err := r.count()
	if err != nil || k == 0 {
		return err
	}
	// The names of the sub-folders, sliced from one string.
	lens := make([]int, k)
	var all []byte
	for i := range k {
		l, err := r.count()
		if err != nil {
			return err
		}
		lens[i] = l
		start := len(all)
		all = append(all, make([]byte, l)...)
		if _, err := io.ReadFull(r.r, all[start:]); err != nil {
			return errCacheFile
		}
	}
	names := string(all)
	n.kids = make([]cnode, k)
	start := 0
	for i, l := range lens {
		n.kids[i].name = names[start : start+l]
		start += l
		if err := r.node(&n.kids[i], depth+1); err != nil {
			return err
		}
	}
	return nil
}
