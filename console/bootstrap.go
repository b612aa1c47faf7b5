package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/livehat/livehat/console/store"
)

// Demo describes what a first run seeds so that a newcomer sees a working
// live room: the demo merchant's stream with its catalog, bound to the demo
// harness version.
type Demo struct {
	// AdminPassword and MerchantPassword, when empty, are generated and
	// printed once.
	AdminPassword    string
	MerchantPassword string
	// Catalog is the demo stream's catalog JSON (harness/catalog).
	Catalog []byte
	// HarnessVersion is the content hash the demo stream is bound to.
	HarnessVersion string
}

// Bootstrap seeds an empty store: an organisation, an operator account
// "admin", the demo merchant with an account "merchant", and the demo stream.
// It prints the passwords it generated to out, once; on a store that
// already has an organisation it does nothing.
func Bootstrap(ctx context.Context, st *store.Store, demo Demo, out io.Writer) error {
	orgs, err := st.Orgs(ctx)
	if err != nil {
		return err
	}
	if len(orgs) > 0 {
		return nil
	}
	org, err := st.CreateOrg(ctx, "LiveHAT demo")
	if err != nil {
		return err
	}
	adminPW, adminGen := demo.AdminPassword, demo.AdminPassword == ""
	if adminGen {
		adminPW = randomPassword()
	}
	hash, err := HashPassword(adminPW)
	if err != nil {
		return fmt.Errorf("admin password: %w", err)
	}
	admin, err := st.CreateUser(ctx, store.NewUser{OrgID: org.ID, Username: "admin", DisplayName: "Administrator",
		Role: store.RoleOperator, PasswordHash: hash})
	if err != nil {
		return err
	}
	op := admin.Scope()
	merchant, err := st.CreateMerchant(ctx, op, "Demo Beauty Shop")
	if err != nil {
		return err
	}
	merchPW, merchGen := demo.MerchantPassword, demo.MerchantPassword == ""
	if merchGen {
		merchPW = randomPassword()
	}
	if hash, err = HashPassword(merchPW); err != nil {
		return fmt.Errorf("merchant password: %w", err)
	}
	if _, err := st.CreateUser(ctx, store.NewUser{OrgID: org.ID, Username: "merchant", DisplayName: "Demo Beauty Shop",
		Role: store.RoleMerchant, MerchantID: merchant.ID, PasswordHash: hash}); err != nil {
		return err
	}
	strategy := json.RawMessage(`{"rules":[{"name":"coupon_push","signal":"price_questions","threshold":3,"window":60000000000,` +
		`"instruction":"Announce the active coupon of the featured item and pin its link."}]}`)
	if _, err := st.CreateStream(ctx, op, store.Stream{MerchantID: merchant.ID, Name: "Demo beauty stream",
		Persona: "A warm, concise host who answers in the viewer's language.", Strategy: strategy,
		Catalog: demo.Catalog, BannedClaims: []string{"cures acne", "100% guaranteed", "medical grade"},
		Currency: "CNY", HarnessVersion: demo.HarnessVersion}); err != nil {
		return err
	}
	fmt.Fprintln(out, "First run: created the demo organisation, merchant and stream.")
	if adminGen {
		fmt.Fprintf(out, "  operator login: admin / %s   (shown once; set LIVEHAT_ADMIN_PASSWORD to choose it)\n", adminPW)
	}
	if merchGen {
		fmt.Fprintf(out, "  merchant login: merchant / %s   (shown once; set LIVEHAT_MERCHANT_PASSWORD to choose it)\n", merchPW)
	}
	return nil
}
