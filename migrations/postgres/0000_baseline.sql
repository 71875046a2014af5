CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"is_default" bigint NOT NULL DEFAULT 0,
	"default_country" text NOT NULL DEFAULT 'US',
	"phone" text,
	"sms_from" text,
	"payment_url" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "accounts_sms_from_idx" ON "accounts" ("sms_from");
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"scopes" text NOT NULL,
	"site_ids" text,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint,
	"revoked_at" bigint,
	FOREIGN KEY ("account_id") REFERENCES "accounts"("id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_idx" ON "api_keys" ("hash");
--> statement-breakpoint
CREATE INDEX "api_keys_account_idx" ON "api_keys" ("account_id");
--> statement-breakpoint
CREATE TABLE "commercial_accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"contacts" text NOT NULL,
	"rates" text,
	"billing_address" text,
	"internal_notes" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	FOREIGN KEY ("account_id") REFERENCES "accounts"("id")
);
--> statement-breakpoint
CREATE INDEX "commercial_accounts_account_created_idx" ON "commercial_accounts" ("account_id", "created_at", "id");
--> statement-breakpoint
CREATE UNIQUE INDEX "commercial_accounts_account_name_uq" ON "commercial_accounts" ("account_id", (lower("commercial_accounts"."name")));
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"rowid" bigint GENERATED ALWAYS AS IDENTITY NOT NULL UNIQUE,
	"key_id" text NOT NULL,
	"idem_key" text NOT NULL,
	"request_hash" text NOT NULL,
	"status_code" bigint NOT NULL,
	"response_body" text NOT NULL,
	"created_at" bigint NOT NULL,
	PRIMARY KEY("key_id", "idem_key")
);
--> statement-breakpoint
CREATE INDEX "idempotency_created_idx" ON "idempotency_keys" ("created_at");
--> statement-breakpoint
CREATE TABLE "inbound_texts" (
	"message_sid" text PRIMARY KEY NOT NULL,
	"account_id" text,
	"job_id" text,
	"reply" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sites" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"created_at" bigint NOT NULL,
	FOREIGN KEY ("account_id") REFERENCES "accounts"("id")
);
--> statement-breakpoint
CREATE INDEX "sites_account_idx" ON "sites" ("account_id");
--> statement-breakpoint
CREATE TABLE "jobs" (
	"rowid" bigint GENERATED ALWAYS AS IDENTITY NOT NULL UNIQUE,
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"site_id" text NOT NULL,
	"external_ref" text,
	"source" text,
	"payer_type" text,
	"service_type" text,
	"urgency" text,
	"customer" text NOT NULL,
	"vehicle" text NOT NULL,
	"pickup" text NOT NULL,
	"destination" text,
	"status" text NOT NULL,
	"cancel_reason" text,
	"rating" double precision,
	"rating_comment" text,
	"rated_at" bigint,
	"reopen_count" bigint NOT NULL DEFAULT 0,
	"eta_at" bigint,
	"quote_cents" bigint,
	"final_price_cents" bigint,
	"payment_method" text,
	"unit_id" text,
	"commercial_account_id" text,
	"tracking_token_hash" text,
	"tracking_token_sealed" text,
	"driver_token_hash" text,
	"driver_token_sealed" text,
	"milestones" text NOT NULL,
	"event_seq" bigint NOT NULL DEFAULT 0,
	"imported" bigint NOT NULL DEFAULT 0,
	"archived_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	FOREIGN KEY ("account_id") REFERENCES "accounts"("id"),
	FOREIGN KEY ("site_id") REFERENCES "sites"("id")
);
--> statement-breakpoint
CREATE INDEX "jobs_account_created_idx" ON "jobs" ("account_id", "created_at", "id", "updated_at");
--> statement-breakpoint
CREATE INDEX "jobs_account_updated_idx" ON "jobs" ("account_id", "updated_at", "created_at", "id");
--> statement-breakpoint
CREATE INDEX "jobs_account_status_idx" ON "jobs" ("account_id", "status", "created_at", "id");
--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_account_external_ref_uq" ON "jobs" ("account_id", "external_ref");
--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_tracking_token_hash_uq" ON "jobs" ("tracking_token_hash");
--> statement-breakpoint
CREATE INDEX "jobs_driver_token_hash_idx" ON "jobs" ("driver_token_hash");
--> statement-breakpoint
CREATE INDEX "jobs_unit_idx" ON "jobs" ("unit_id");
--> statement-breakpoint
CREATE INDEX "jobs_commercial_account_idx" ON "jobs" ("commercial_account_id");
--> statement-breakpoint
CREATE INDEX "jobs_customer_phone_idx" ON "jobs" (((customer::jsonb #>> '{phone}')), "created_at");
--> statement-breakpoint
CREATE TABLE "invoices" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"job_id" text NOT NULL,
	"number" bigint NOT NULL,
	"status" text NOT NULL,
	"lines" text NOT NULL,
	"total_cents" bigint NOT NULL,
	"amount_paid_cents" bigint NOT NULL DEFAULT 0,
	"issued_by_user_id" text,
	"issued_at" bigint NOT NULL,
	"paid_at" bigint,
	"voided_at" bigint,
	"written_off_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	FOREIGN KEY ("account_id") REFERENCES "accounts"("id"),
	FOREIGN KEY ("job_id") REFERENCES "jobs"("id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "invoices_account_number_uq" ON "invoices" ("account_id", "number");
--> statement-breakpoint
CREATE INDEX "invoices_job_idx" ON "invoices" ("job_id", "created_at");
--> statement-breakpoint
CREATE TABLE "invoice_payments" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"invoice_id" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"method" text NOT NULL,
	"recorded_by_user_id" text,
	"created_at" bigint NOT NULL,
	FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id")
);
--> statement-breakpoint
CREATE INDEX "invoice_payments_invoice_idx" ON "invoice_payments" ("invoice_id", "created_at");
--> statement-breakpoint
CREATE TABLE "job_events" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"job_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"type" text NOT NULL,
	"from_status" text,
	"to_status" text,
	"actor" text NOT NULL,
	"detail" text NOT NULL,
	"created_at" bigint NOT NULL,
	"position" bigint NOT NULL DEFAULT 0,
	FOREIGN KEY ("job_id") REFERENCES "jobs"("id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "job_events_job_seq_uq" ON "job_events" ("job_id", "seq");
--> statement-breakpoint
CREATE INDEX "job_events_account_created_idx" ON "job_events" ("account_id", "created_at");
--> statement-breakpoint
CREATE UNIQUE INDEX "job_events_position_uq" ON "job_events" ("position");
--> statement-breakpoint
CREATE TABLE "job_notes" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"job_id" text NOT NULL,
	"text" text NOT NULL,
	"customer_visible" bigint NOT NULL,
	"author_key_id" text,
	"author_user_id" text,
	"created_at" bigint NOT NULL,
	FOREIGN KEY ("job_id") REFERENCES "jobs"("id")
);
--> statement-breakpoint
CREATE INDEX "job_notes_job_idx" ON "job_notes" ("job_id", "created_at");
--> statement-breakpoint
CREATE TABLE "job_photos" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"job_id" text NOT NULL,
	"content_type" text NOT NULL,
	"bytes" bigint NOT NULL,
	"sha256" text NOT NULL,
	"data" bytea NOT NULL,
	"taken_by" text NOT NULL,
	"user_id" text,
	"unit_id" text,
	"created_at" bigint NOT NULL,
	FOREIGN KEY ("job_id") REFERENCES "jobs"("id")
);
--> statement-breakpoint
CREATE INDEX "job_photos_job_idx" ON "job_photos" ("job_id", "created_at");
--> statement-breakpoint
CREATE TABLE "job_signatures" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"job_id" text NOT NULL,
	"signer_name" text NOT NULL,
	"content_type" text NOT NULL,
	"bytes" bigint NOT NULL,
	"data" bytea NOT NULL,
	"unit_id" text,
	"created_at" bigint NOT NULL,
	FOREIGN KEY ("job_id") REFERENCES "jobs"("id")
);
--> statement-breakpoint
CREATE INDEX "job_signatures_job_idx" ON "job_signatures" ("job_id", "created_at");
--> statement-breakpoint
CREATE TABLE "login_failures" (
	"id" bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "login_failures_email_at_idx" ON "login_failures" ("email", "at");
--> statement-breakpoint
CREATE TABLE "retired_links" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"account_id" text NOT NULL,
	"job_id" text NOT NULL,
	"reason" text NOT NULL,
	"retired_at" bigint NOT NULL,
	FOREIGN KEY ("job_id") REFERENCES "jobs"("id")
);
--> statement-breakpoint
CREATE INDEX "retired_links_job_idx" ON "retired_links" ("job_id");
--> statement-breakpoint
CREATE TABLE "services" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"service_type" text NOT NULL,
	"rates" text NOT NULL,
	"active" bigint NOT NULL DEFAULT 1,
	"created_at" bigint NOT NULL,
	FOREIGN KEY ("account_id") REFERENCES "accounts"("id")
);
--> statement-breakpoint
CREATE INDEX "services_account_idx" ON "services" ("account_id", "name");
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"last_login_at" bigint,
	"disabled_at" bigint,
	FOREIGN KEY ("account_id") REFERENCES "accounts"("id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_uq" ON "users" ("email");
--> statement-breakpoint
CREATE INDEX "users_account_idx" ON "users" ("account_id");
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"user_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"last_seen_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"ended_at" bigint,
	FOREIGN KEY ("user_id") REFERENCES "users"("id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_token_uq" ON "sessions" ("token_hash");
--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" ("user_id");
--> statement-breakpoint
CREATE TABLE "sms_consents" (
	"account_id" text NOT NULL,
	"phone" text NOT NULL,
	"consented_at" bigint,
	"consent_source" text,
	"opted_out_at" bigint,
	"opt_out_source" text,
	"updated_at" bigint NOT NULL,
	PRIMARY KEY("account_id", "phone")
);
--> statement-breakpoint
CREATE TABLE "text_templates" (
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"body" text NOT NULL,
	"updated_at" bigint NOT NULL,
	PRIMARY KEY("account_id", "name")
);
--> statement-breakpoint
CREATE TABLE "texts" (
	"rowid" bigint GENERATED ALWAYS AS IDENTITY NOT NULL UNIQUE,
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"job_id" text,
	"unit_id" text,
	"event_id" text,
	"recipient" text NOT NULL,
	"to_phone" text,
	"from_number" text,
	"template" text NOT NULL,
	"body" text NOT NULL,
	"status" text NOT NULL,
	"skip_reason" text,
	"provider_message_id" text,
	"error" text,
	"attempts" bigint NOT NULL DEFAULT 0,
	"provider" text,
	"sending_at" bigint,
	"next_attempt_at" bigint,
	"lease_owner" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "texts_open_due_idx" ON "texts" ("next_attempt_at") WHERE next_attempt_at IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "texts_open_phone_idx" ON "texts" ("to_phone", "created_at", "id") WHERE next_attempt_at IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "texts_phone_idx" ON "texts" ("to_phone", "created_at");
--> statement-breakpoint
CREATE INDEX "texts_job_idx" ON "texts" ("job_id", "created_at");
--> statement-breakpoint
CREATE INDEX "texts_provider_id_idx" ON "texts" ("provider_message_id");
--> statement-breakpoint
CREATE TABLE "units" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"site_ids" text,
	"name" text NOT NULL,
	"driver_name" text,
	"driver_phone" text,
	"device_id" text NOT NULL,
	"off_duty" bigint NOT NULL DEFAULT 0,
	"lat" double precision,
	"lng" double precision,
	"accuracy_m" double precision,
	"heading" double precision,
	"speed_kph" double precision,
	"position_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	FOREIGN KEY ("account_id") REFERENCES "accounts"("id")
);
--> statement-breakpoint
CREATE INDEX "units_account_idx" ON "units" ("account_id", "name");
--> statement-breakpoint
CREATE UNIQUE INDEX "units_device_uq" ON "units" ("device_id");
--> statement-breakpoint
CREATE TABLE "unit_positions" (
	"id" bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"unit_id" text NOT NULL,
	"at" bigint NOT NULL,
	"lat" double precision NOT NULL,
	"lng" double precision NOT NULL,
	"accuracy_m" double precision,
	"received_at" bigint NOT NULL,
	FOREIGN KEY ("account_id") REFERENCES "accounts"("id"),
	FOREIGN KEY ("unit_id") REFERENCES "units"("id")
);
--> statement-breakpoint
CREATE INDEX "unit_positions_unit_at_idx" ON "unit_positions" ("unit_id", "at");
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"rowid" bigint GENERATED ALWAYS AS IDENTITY NOT NULL UNIQUE,
	"id" text PRIMARY KEY NOT NULL,
	"delivery_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"event_type" text NOT NULL,
	"attempt" bigint NOT NULL,
	"status" text NOT NULL,
	"request_headers" text NOT NULL,
	"response_status" bigint,
	"response_headers" text,
	"response_body" text,
	"duration_ms" bigint NOT NULL,
	"error" text,
	"error_message" text,
	"next_attempt_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "webhook_attempts_endpoint_idx" ON "webhook_attempts" ("endpoint_id", "created_at");
--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" ("delivery_id");
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"rowid" bigint GENERATED ALWAYS AS IDENTITY NOT NULL UNIQUE,
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"event_id" text,
	"event_type" text NOT NULL,
	"data" text,
	"status" text NOT NULL,
	"attempts" bigint NOT NULL DEFAULT 0,
	"next_attempt_at" bigint,
	"lease_owner" text,
	"first_attempt_at" bigint,
	"last_error" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_open_idx" ON "webhook_deliveries" ("endpoint_id", "status", "next_attempt_at") WHERE next_attempt_at IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" ("event_id");
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_created_idx" ON "webhook_deliveries" ("created_at");
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"events" text NOT NULL,
	"status" text NOT NULL,
	"paused_reason" text,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" bigint,
	"consecutive_failures" bigint NOT NULL DEFAULT 0,
	"site_ids" text,
	"next_due_at" bigint,
	"cursor" bigint NOT NULL DEFAULT 0,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"deleted_at" bigint,
	FOREIGN KEY ("account_id") REFERENCES "accounts"("id")
);
--> statement-breakpoint
CREATE INDEX "webhook_endpoints_account_idx" ON "webhook_endpoints" ("account_id", "deleted_at");
--> statement-breakpoint
CREATE INDEX "webhook_endpoints_due_idx" ON "webhook_endpoints" ("next_due_at") WHERE status = 'active' AND deleted_at IS NULL AND next_due_at IS NOT NULL;
--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"seq" bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY NOT NULL,
	"event_id" text NOT NULL,
	"account_id" text NOT NULL,
	"site_id" text,
	"type" text NOT NULL,
	"data" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_events_event_uq" ON "webhook_events" ("event_id");
--> statement-breakpoint
CREATE INDEX "webhook_events_account_seq_idx" ON "webhook_events" ("account_id", "seq");
--> statement-breakpoint
CREATE INDEX "webhook_events_created_idx" ON "webhook_events" ("created_at");
