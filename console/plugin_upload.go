package console

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/plugins"
)

// uploadField is the multipart form field that carries a plugin package.
const uploadField = "package"

// decodeUpload extracts the plugin package (.lhp archive bytes, as
// `livehat plugin pack` writes them) from an upload request: either the
// raw body (any content type but multipart) or the "package" file of a
// multipart/form-data body (the first file part when none is named so).
// A package over limit bytes is a 413 naming the limit; a malformed
// envelope or a missing package is a 400 naming the field.
func decodeUpload(contentType string, body []byte, limit int) ([]byte, error) {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "multipart/form-data" {
		if len(body) == 0 {
			return nil, badRequest(uploadField, "the request body is empty: send the .lhp file from `livehat plugin pack` as the body or as the multipart field \"package\"")
		}
		if len(body) > limit {
			return nil, tooLarge(len(body), limit)
		}
		return body, nil
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, badRequest("body", "multipart/form-data without a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var fallback []byte
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, badRequest("body", "malformed multipart body: "+err.Error())
		}
		named := part.FormName() == uploadField
		if !named && (part.FileName() == "" || fallback != nil) {
			part.Close()
			continue
		}
		data, err := io.ReadAll(io.LimitReader(part, int64(limit)+1))
		part.Close()
		if err != nil {
			return nil, badRequest("body", "malformed multipart body: "+err.Error())
		}
		if len(data) > limit {
			return nil, tooLarge(len(data), limit)
		}
		if named {
			if len(data) == 0 {
				return nil, badRequest(uploadField, "the package file is empty")
			}
			return data, nil
		}
		fallback = data
	}
	if len(fallback) == 0 {
		return nil, badRequest(uploadField, "no file in the multipart body: send the .lhp file as the field \"package\"")
	}
	return fallback, nil
}

func tooLarge(size, limit int) error {
	return fieldError(fiber.StatusRequestEntityTooLarge, uploadField,
		fmt.Sprintf("the package is over the upload limit of %d bytes (%s)%s", limit, mib(limit), sizeNote(size, limit)))
}

func sizeNote(size, limit int) string {
	if size > limit+1 {
		return fmt.Sprintf(": it is %d bytes", size)
	}
	return ""
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// packageProblem maps an error of reading or verifying a package to a 422
// naming what is wrong: the archive, the manifest, the module's hash, the
// signature or the module itself.
func packageProblem(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, plugins.ErrIntegrity):
		return fieldError(fiber.StatusUnprocessableEntity, "sha256", msg)
	case errors.Is(err, plugins.ErrSignature):
		return fieldError(fiber.StatusUnprocessableEntity, "signature", msg)
	case errors.Is(err, plugins.ErrABI):
		return fieldError(fiber.StatusUnprocessableEntity, "wasm", msg)
	case strings.HasPrefix(msg, "package: manifest"), strings.HasPrefix(msg, "manifest"):
		return fieldError(fiber.StatusUnprocessableEntity, "manifest", msg)
	}
	return fieldError(fiber.StatusUnprocessableEntity, uploadField, msg)
}

// maxUnpacked bounds what an uploaded archive declares it unpacks to, so
// that a small zip cannot make the server inflate a large one: a package
// is a manifest, a module and a signature.
const (
	maxUnpacked       = 64 << 20
	maxArchiveEntries = 3
)

// checkArchive refuses, before anything is inflated, an archive whose
// central directory lists more entries than a package has or more bytes
// than maxUnpacked. A malformed archive passes here and is refused, with
// its reason, by plugins.ReadPackage.
func checkArchive(raw []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return nil
	}
	if len(zr.File) > maxArchiveEntries {
		return fieldError(fiber.StatusUnprocessableEntity, uploadField,
			fmt.Sprintf("the archive holds %d entries; a package holds at most %d (manifest.json, the module, signature.json)", len(zr.File), maxArchiveEntries))
	}
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
	}
	if total > maxUnpacked {
		return fieldError(fiber.StatusRequestEntityTooLarge, uploadField,
			fmt.Sprintf("the archive unpacks to %d bytes, over the limit of %d bytes (%s)", total, maxUnpacked, mib(maxUnpacked)))
	}
	return nil
}
