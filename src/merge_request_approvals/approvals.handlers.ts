import { defineHandlers } from '../core/handler.js';
import {
  presentApprovalRule,
  presentApprovals,
  presentApprovalSettings,
  presentApprovalState,
} from './approvals.presenter.js';

export const mergeRequestApprovalsHandlers = defineHandlers(
  ['approvalRules', 'approvalSettings', 'mergeRequestApprovals'],
  {
    async getMergeRequestApprovals({ params, subject, caller, services, request }) {
      const records = await services.mergeRequestApprovals.state(caller, subject, params.merge_request_iid);
      return { status: 200, body: presentApprovals(records, request.externalUrl) };
    },

    async getMergeRequestApprovalState({ params, subject, caller, services, request }) {
      const records = await services.mergeRequestApprovals.state(caller, subject, params.merge_request_iid);
      return { status: 200, body: presentApprovalState(records, request.externalUrl) };
    },

    async approveMergeRequest({ params, subject, body, caller, services, request }) {
      const records = await services.mergeRequestApprovals.approve(
        caller,
        subject,
        params.merge_request_iid,
        body ?? {},
      );
      return { status: 201, body: presentApprovals(records, request.externalUrl) };
    },

    async unapproveMergeRequest({ params, subject, caller, services, request }) {
      const records = await services.mergeRequestApprovals.unapprove(
        caller,
        subject,
        params.merge_request_iid,
      );
      return { status: 201, body: presentApprovals(records, request.externalUrl) };
    },

    async resetMergeRequestApprovals({ params, subject, caller, services }) {
      await services.mergeRequestApprovals.reset(caller, subject, params.merge_request_iid);
      return { status: 202, body: null };
    },

    async getProjectApprovalSettings({ subject, services }) {
      return {
        status: 200,
        body: presentApprovalSettings(await services.approvalSettings.settings(subject.project.id)),
      };
    },

    async updateProjectApprovalSettings({ subject, body, services }) {
      return {
        status: 201,
        body: presentApprovalSettings(await services.approvalSettings.updateSettings(subject, body)),
      };
    },

    async listProjectApprovalRules({ params, subject, services, request }) {
      const records = await services.approvalRules.listProjectRules(subject, params, request);
      return {
        status: 200,
        body: records.rules.map((rule) => presentApprovalRule(rule, records, request.externalUrl)),
        headers: records.headers,
      };
    },

    async createProjectApprovalRule({ subject, body, services, request }) {
      const records = await services.approvalRules.createProjectRule(subject, body);
      return { status: 201, body: presentApprovalRule(records.rules[0], records, request.externalUrl) };
    },

    async getProjectApprovalRule({ params, subject, services, request }) {
      const records = await services.approvalRules.getProjectRule(subject, params.approval_rule_id);
      return { status: 200, body: presentApprovalRule(records.rules[0], records, request.externalUrl) };
    },

    async updateProjectApprovalRule({ params, subject, body, services, request }) {
      const records = await services.approvalRules.updateProjectRule(subject, params.approval_rule_id, body);
      return { status: 200, body: presentApprovalRule(records.rules[0], records, request.externalUrl) };
    },

    async deleteProjectApprovalRule({ params, subject, services }) {
      await services.approvalRules.deleteProjectRule(subject, params.approval_rule_id);
      return { status: 204, body: null };
    },

    async listMergeRequestApprovalRules({ params, subject, services, request }) {
      const records = await services.approvalRules.listMergeRequestRules(
        subject,
        params.merge_request_iid,
        params,
        request,
      );
      return {
        status: 200,
        body: records.rules.map((rule) => presentApprovalRule(rule, records, request.externalUrl)),
        headers: records.headers,
      };
    },

    async createMergeRequestApprovalRule({ params, subject, body, services, request }) {
      const records = await services.approvalRules.createMergeRequestRule(
        subject,
        params.merge_request_iid,
        body,
      );
      return { status: 201, body: presentApprovalRule(records.rules[0], records, request.externalUrl) };
    },

    async getMergeRequestApprovalRule({ params, subject, services, request }) {
      const records = await services.approvalRules.getMergeRequestRule(
        subject,
        params.merge_request_iid,
        params.approval_rule_id,
      );
      return { status: 200, body: presentApprovalRule(records.rules[0], records, request.externalUrl) };
    },

    async updateMergeRequestApprovalRule({ params, subject, body, services, request }) {
      const records = await services.approvalRules.updateMergeRequestRule(
        subject,
        params.merge_request_iid,
        params.approval_rule_id,
        body,
      );
      return { status: 200, body: presentApprovalRule(records.rules[0], records, request.externalUrl) };
    },

    async deleteMergeRequestApprovalRule({ params, subject, services }) {
      await services.approvalRules.deleteMergeRequestRule(
        subject,
        params.merge_request_iid,
        params.approval_rule_id,
      );
      return { status: 204, body: null };
    },
  },
);
